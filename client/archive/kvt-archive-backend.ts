/**
 * The archive's backend on a kvt table (keys: kvt-archive-keys.ts). Every change of a page is one
 * atomic `update` of its family, conditional on the version of the page's metadata key: that is the
 * compare-and-set. Index entries are inserted (never put), so even a batch built from a stale read
 * cannot archive a render twice, and sealed block chunks are inserted too: a sealed block is
 * written once and never again.
 */
import { ConditionalTableUpdateError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import { MAX_VALUE_LENGTH } from '../limits';
import type { TableModification } from '../types';
import { Version } from '../version';
import type { AppendEntry, ArchiveBackend, BackendSizes, IndexHit, OpenContent, PageSnapshot, PageState, StoredContent } from './archive-backend';
import { emptyPageState } from './archive-backend';
import { ArchiveCorruptedError } from './archive-errors';
import { blockChunkCount, chunk, pendingStoredLength } from './block-codec';
import * as keys from './kvt-archive-keys';
import type { EncodedRecord } from './record-codec';

/** Values are cut at the table's value limit. */
const CHUNK = MAX_VALUE_LENGTH;
const EMPTY = new Uint8Array(0);
/** Pages whose metadata `pages()` reads at once. */
const LIST_CONCURRENCY = 16;

type Bytes = Uint8Array;
type Mod = TableModification<Bytes, Bytes>;

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** The archive backend on a table of byte keys and values. */
export class KvtArchiveBackend implements ArchiveBackend {
  readonly sizes: BackendSizes = {
    indexEntry: (block) => keys.INDEX_KEY_BYTES + keys.encodeBlockNumber(block).length,
    pendingEntry: (stored) => stored + Math.ceil(stored / CHUNK) * keys.PENDING_KEY_BYTES,
    block: (stored) => stored + Math.ceil(stored / CHUNK) * 6,
    // The family name once (the table stores a family's keys together), the metadata entry, the directory entry.
    page: (title, state) => 2 * Buffer.byteLength(title, 'utf8') + 1 + JSON.stringify(state).length + keys.directoryShard(0).length,
  };

  constructor(private readonly table: KeyValueTable<Bytes, Bytes>) {}

  async readState(title: string): Promise<PageSnapshot> {
    const entry = await this.table.get(title, keys.META_KEY);
    if (!entry) return { state: emptyPageState(), token: null };
    let state: PageState;
    try {
      state = { ...emptyPageState(), ...JSON.parse(asBuffer(entry.value).toString('utf8')) };
    } catch (err) {
      throw new ArchiveCorruptedError(title, -1, "the page's metadata entry is not JSON", { cause: err });
    }
    return { state, token: entry.version.toString() };
  }

  async existing(title: string, records: readonly EncodedRecord[]): Promise<Set<string>> {
    const found = await this.table.getAll(
      title,
      records.map((r) => keys.indexKey(r.rev, r.tid)),
    );
    return new Set(records.filter((_, i) => found[i] !== null).map((r) => r.id));
  }

  private metaPut(snap: PageSnapshot, next: PageState): Mod {
    return { type: 'put', key: keys.META_KEY, value: Buffer.from(JSON.stringify(next)), version: snap.token === null ? Version.NOT_EXISTS : Version.fromString(snap.token) };
  }

  /** Runs a conditional batch; false when a condition failed (another writer got there first). */
  private async commit(title: string, mods: Mod[]): Promise<boolean> {
    try {
      await this.table.update(title, mods);
      return true;
    } catch (err) {
      if (err instanceof ConditionalTableUpdateError) return false;
      throw err;
    }
  }

  async commitAppend(title: string, snap: PageSnapshot, next: PageState, block: number, entries: readonly AppendEntry[]): Promise<boolean> {
    // The directory entry first: a page is listed before it holds anything (an empty listed page counts as nothing).
    if (snap.token === null) await this.table.put(keys.directoryFamily(title), Buffer.from(title, 'utf8'), EMPTY);
    const mods: Mod[] = [this.metaPut(snap, next)];
    const value = keys.encodeBlockNumber(block);
    for (const { record, pending } of entries) {
      mods.push({ type: 'insert', key: keys.indexKey(record.rev, record.tid), value });
      chunk(pending, CHUNK).forEach((part, i) => mods.push({ type: 'put', key: keys.pendingKey(block, record.rev, record.tid, i), value: part }));
    }
    return this.commit(title, mods);
  }

  private async readPrefix(title: string, prefix: Buffer): Promise<{ key: Buffer; value: Buffer }[]> {
    const out: { key: Buffer; value: Buffer }[] = [];
    for await (const page of this.table.entryIterator(title, { prefix, maxKeysAtOnce: 1000 })) {
      for (const e of page.items) out.push({ key: asBuffer(e.key), value: asBuffer(e.value) });
    }
    return out;
  }

  async readOpen(title: string, block: number): Promise<OpenContent> {
    const [image, pending] = await Promise.all([this.readPrefix(title, keys.imagePrefix(block)), this.readPrefix(title, keys.pendingPrefix(block))]);
    const records = new Map<string, Buffer[]>();
    for (const { key, value } of pending) {
      const id = key.subarray(0, keys.PENDING_ID_BYTES).toString('hex');
      records.set(id, [...(records.get(id) ?? []), value]);
    }
    return { image: image.length ? Buffer.concat(image.map((e) => e.value)) : null, pending: [...records.values()].map((parts) => Buffer.concat(parts)) };
  }

  async commitImage(title: string, snap: PageSnapshot, next: PageState, block: number, image: Buffer): Promise<boolean> {
    const mods: Mod[] = [this.metaPut(snap, next), { type: 'removeRange', prefix: keys.imagePrefix(block) }];
    chunk(image, CHUNK).forEach((part, i) => mods.push({ type: 'put', key: keys.imageKey(block, i), value: part }));
    mods.push({ type: 'removeRange', prefix: keys.pendingPrefix(block) });
    return this.commit(title, mods);
  }

  async commitSeal(title: string, snap: PageSnapshot, next: PageState, block: number, sealed: Buffer): Promise<boolean> {
    const mods: Mod[] = [this.metaPut(snap, next)];
    chunk(sealed, CHUNK).forEach((part, i) => mods.push({ type: 'insert', key: keys.blockKey(block, i), value: part }));
    mods.push({ type: 'removeRange', prefix: keys.imagePrefix(block) }, { type: 'removeRange', prefix: keys.pendingPrefix(block) });
    return this.commit(title, mods);
  }

  private hit(title: string, rev: number, tid: string, value: Uint8Array): IndexHit {
    const block = keys.decodeBlockNumber(value);
    if (Number.isNaN(block)) throw new ArchiveCorruptedError(title, -1, `the index entry of rev ${rev} tid ${tid} is damaged`);
    return { rev, tid, block };
  }

  async lookup(title: string, rev: number, tid?: string): Promise<IndexHit | null> {
    if (tid !== undefined) {
      const entry = await this.table.get(title, keys.indexKey(rev, tid));
      return entry ? this.hit(title, rev, tid.toLowerCase(), entry.value) : null;
    }
    for await (const page of this.table.entryIterator(title, { prefix: keys.indexPrefix(rev), reverse: true, maxKeysAtOnce: 1 })) {
      const latest = page.items[0];
      if (latest) return this.hit(title, rev, keys.indexKeyTid(latest.key), latest.value);
    }
    return null;
  }

  /**
   * A value cut into chunks, from its first chunk: the chunks found, in order. With `whole`, null
   * when one is missing (an image or pending record replaced while it was read: read again);
   * without, what there is (a sealed block never changes: its checks then report what is missing).
   */
  private async assemble(title: string, first: Buffer, count: number, keyOf: (part: number) => Buffer, whole: boolean): Promise<Buffer | null> {
    if (count <= 1) return first;
    const parts = await this.table.getAll(
      title,
      Array.from({ length: count - 1 }, (_, i) => keyOf(i + 1)),
    );
    if (whole && parts.some((p) => p === null)) return null;
    return Buffer.concat([first, ...parts.filter((p) => p !== null).map((p) => asBuffer(p!.value))]);
  }

  async readContent(title: string, hit: IndexHit): Promise<StoredContent | null> {
    const { block, rev, tid } = hit;
    const [sealed, pending, image] = await this.table.getAll(title, [keys.blockKey(block, 0), keys.pendingKey(block, rev, tid, 0), keys.imageKey(block, 0)]);
    if (sealed) {
      const first = asBuffer(sealed.value);
      return { kind: 'sealed', stored: (await this.assemble(title, first, blockChunkCount(title, block, first), (i) => keys.blockKey(block, i), false))! };
    }
    if (pending) {
      const first = asBuffer(pending.value);
      const stored = await this.assemble(title, first, Math.ceil(pendingStoredLength(title, block, first) / first.length), (i) => keys.pendingKey(block, rev, tid, i), true);
      return stored && { kind: 'pending', stored };
    }
    if (image) {
      const first = asBuffer(image.value);
      const stored = await this.assemble(title, first, blockChunkCount(title, block, first), (i) => keys.imageKey(block, i), true);
      return stored && { kind: 'image', stored };
    }
    return null;
  }

  async *pages(): AsyncIterable<{ title: string; state: PageState }> {
    for (let shard = 0; shard < keys.DIRECTORY_SHARDS; shard++) {
      for await (const page of this.table.keyIterator(keys.directoryShard(shard), { maxKeysAtOnce: LIST_CONCURRENCY })) {
        const titles = page.items.map((k) => asBuffer(k.key).toString('utf8'));
        const states = await Promise.all(titles.map((t) => this.readState(t)));
        for (let i = 0; i < titles.length; i++) yield { title: titles[i], state: states[i].state };
      }
    }
  }

  async close(): Promise<void> {
    // The table is the caller's: it stays open.
  }
}
