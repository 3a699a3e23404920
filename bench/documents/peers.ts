/**
 * The two sides of the document benchmark behind one interface: kvt's DocumentStore on a local
 * cluster of real processes (a network hop, group-committed durable writes) and PouchDB
 * (`pouchdb-node`: CouchDB's model on LevelDB, in this process).
 */
import * as path from 'node:path';
import PouchDB from 'pouchdb-node';
import { DocumentStore, KeyValueTableFactory, KeyValueTableManager, ReplicatedDocument, Serializers } from '../../client';
import { makeTempDir, removeDir } from '../core/processes';
import { startKvtCluster } from '../peers/kvt-cluster';

/** What the workloads call. */
export interface DocumentPeer {
  readonly name: string;
  /** Replication write of one batch (`newEdits: false`). */
  replicate(docs: ReplicatedDocument[]): Promise<void>;
  /** Interactive update of `id` at `rev`; the new rev. */
  update(id: string, rev: string, body: Record<string, unknown>): Promise<string>;
  /** The winner's rev, or undefined when missing. */
  read(id: string): Promise<string | undefined>;
  /** The whole changes feed: the number of results. */
  changesAll(): Promise<number>;
  /** The same side on a scratch database of its own (for the warm-up): same process, cluster and settings. */
  scratch(): Promise<DocumentPeer>;
  close(): Promise<void>;
}

/** kvt: a controller and two segment stores, a table of `partitions` partitions, one DocumentStore. */
export async function kvtPeer(partitions: number): Promise<DocumentPeer> {
  const cluster = await startKvtCluster();
  const manager = new KeyValueTableManager({ controller: cluster.controller });
  const factory = KeyValueTableFactory.withScope('bench', { controller: cluster.controller });
  try {
    await manager.createScope('bench');
    await manager.createKeyValueTable('bench', 'docs', { partitionCount: partitions });
  } catch (err) {
    await factory.close();
    await manager.close();
    await cluster.stop();
    throw err;
  }
  const name = `kvt (DocumentStore, ${partitions} partitions, 2 segment stores)`;
  let scratches = 0;
  const onTable = (tableName: string, closeAll: () => Promise<void>): DocumentPeer => {
    const table = factory.forKeyValueTable(tableName, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytesView });
    const store = new DocumentStore(table, { partitionCount: partitions });
    return {
      name,
      replicate: async (docs) => void (await store.bulkDocs(docs, { newEdits: false })),
      update: async (id, rev, body) => (await store.put(id, body, { rev })).rev,
      read: async (id) => (await store.get(id))?._rev,
      changesAll: async () => (await store.changes()).results.length,
      async scratch() {
        const scratchName = `scratch${++scratches}`;
        await manager.createKeyValueTable('bench', scratchName, { partitionCount: partitions });
        return onTable(scratchName, async () => void (await manager.deleteKeyValueTable('bench', scratchName)));
      },
      async close() {
        await store.close();
        await table.close();
        await closeAll();
      },
    };
  };
  return onTable('docs', async () => {
    await factory.close();
    await manager.close();
    await cluster.stop();
  });
}

type PouchDatabase = InstanceType<typeof PouchDB>;

/** PouchDB on LevelDB (`pouchdb-node`) in a temp directory. */
export async function pouchPeer(): Promise<DocumentPeer> {
  const dir = makeTempDir('pouchdb');
  let scratches = 0;
  const onDatabase = (dbName: string, finish: (db: PouchDatabase) => Promise<void>): DocumentPeer => {
    const db = new PouchDB(path.join(dir, dbName));
    return {
      name: 'PouchDB 9 (pouchdb-node, LevelDB, in-process)',
      replicate: async (docs) => void (await db.bulkDocs(docs, { new_edits: false })),
      update: async (id, rev, body) => (await db.put({ _id: id, _rev: rev, ...body })).rev,
      read: async (id) => {
        try {
          return (await db.get(id))._rev as string;
        } catch (err) {
          if ((err as { status?: number }).status === 404) return undefined;
          throw err;
        }
      },
      changesAll: async () => (await db.changes({ since: 0 })).results.length,
      scratch: async () => onDatabase(`scratch${++scratches}`, (scratch) => scratch.destroy()),
      close: () => finish(db),
    };
  };
  return onDatabase('docs', async (db) => {
    await db.close();
    removeDir(dir);
  });
}
