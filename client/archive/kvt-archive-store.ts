/**
 * The archive on a kvt table: the embedded default, no process beside the cluster. One key family
 * per page holds its metadata, index, pending records, open-block image and sealed blocks (layout in
 * kvt-archive-keys.ts), so every change of a page is one atomic batch.
 */
import { InvalidArgumentError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import type { ArchiveStoreOptions } from './archive-store';
import { BlockArchive } from './block-archive';
import { KvtArchiveBackend } from './kvt-archive-backend';

/** Options of {@link KvtArchiveStore}. */
export type KvtArchiveStoreOptions = ArchiveStoreOptions;

/**
 * An {@link ArchiveStore} on a table of byte keys and values (`Serializers.bytes` or
 * `Serializers.bytesView` for both), which should hold nothing else. `close()` flushes and leaves
 * the table open: it is the caller's.
 * @throws InvalidArgumentError for a missing table or a bad option.
 */
export class KvtArchiveStore extends BlockArchive {
  constructor(table: KeyValueTable<Uint8Array, Uint8Array>, options?: KvtArchiveStoreOptions) {
    if (!table || typeof table.update !== 'function') throw new InvalidArgumentError('KvtArchiveStore needs a KeyValueTable of byte keys and values');
    super(new KvtArchiveBackend(table), options, `KvtArchiveStore on ${table.name}`);
  }
}
