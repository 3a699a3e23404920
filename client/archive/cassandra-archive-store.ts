/**
 * The archive on Apache Cassandra, for history that outgrows one machine: a metadata/index table
 * and a block table partitioned by (page, block), as source document 003 lays out
 * (cassandra-schema.ts). `cassandra-driver` is loaded when the store first connects, not when this
 * module is imported.
 */
import type { ArchiveStoreOptions } from './archive-store';
import { BlockArchive } from './block-archive';
import { CassandraArchiveBackend, CassandraConnectionOptions } from './cassandra-archive-backend';

/** Options of {@link CassandraArchiveStore}: where Cassandra is, and the archive's own options. */
export type CassandraArchiveStoreOptions = CassandraConnectionOptions & ArchiveStoreOptions;

/**
 * An {@link ArchiveStore} on Cassandra. It connects (and creates the keyspace and tables unless
 * `createSchema: false`) on first use; `close()` flushes and shuts its session down.
 * @throws InvalidArgumentError for a bad option (at once).
 */
export class CassandraArchiveStore extends BlockArchive {
  constructor(options: CassandraArchiveStoreOptions) {
    const backend = new CassandraArchiveBackend(options);
    super(backend, archiveOptions(options), `CassandraArchiveStore on ${backend.description}`);
  }
}

function archiveOptions(o: CassandraArchiveStoreOptions): ArchiveStoreOptions {
  const { blockRevisions, blockBytes, quality, windowBits, cacheBytes, concurrency, flushOnClose } = o;
  const picked: ArchiveStoreOptions = { blockRevisions, blockBytes, quality, windowBits, cacheBytes, concurrency, flushOnClose };
  for (const k of Object.keys(picked) as (keyof ArchiveStoreOptions)[]) if (picked[k] === undefined) delete picked[k];
  return picked;
}
