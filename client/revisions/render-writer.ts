/**
 * Writes a render into its page's family. The common case is one atomic update: the cull of what has
 * expired (retention.ts), the timeline's head when needed, the removal of any other upload's chunks
 * of the same (rev, tid), the record, its chunks and its timeline entry — in this order, because an
 * update applies its modifications in order and the cull's ranges may cover the render being written.
 *
 * A render too large for one batch with room for the rest (MAX_BATCH_BYTES, 16 MiB, less
 * BATCH_RESERVE_BYTES) is staged: its first chunks go in batches of their own under a fresh upload id,
 * invisible to readers because no record names them yet, and the last update carries the remaining
 * chunks and the record, on condition that the record is still as it was before the upload began (so
 * a concurrent write of the same (rev, tid), which removes other uploads' chunks, makes this upload
 * start over instead of committing a record whose chunks are gone). A failed upload leaves chunks no
 * record names: they are removed when it fails if possible, and otherwise with the range of a later
 * write of that (rev, tid) or a cull.
 *
 * Many renders of one page (an import) go in as few updates as the limits allow (`writeAll`): each
 * update is what the renders' single writes would have done one after another — one cull, one head,
 * every record with its chunks and late-write entry, and one supersession entry for the highest
 * render the batch superseded (an entry says every render up to it was superseded at T, so it stands
 * for all the batch's own). A render too large to share an update is written alone, in its turn.
 */
import { ConditionalTableUpdateError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import { MAX_BATCH_BYTES, MAX_BATCH_ITEMS } from '../limits';
import type { TableModification } from '../types';
import { Version } from '../version';
import { RenderExistsError } from './errors';
import type { Archiver } from './archiving';
import { after, chunkKey, compareBytes, keyOf, KIND, POSITION_BYTES, recordKey } from './key-layout';
import { decodeRecord, EncodedRender } from './render-codec';
import { CULL_MAX_ITEMS, headUpdate, planCull, readTimeline, supersessionOf } from './retention';

type Table = KeyValueTable<Uint8Array, Uint8Array>;
type Modification = TableModification<Uint8Array, Uint8Array>;

/** Batch bytes kept free for the cull, the head and the timeline entry. */
export const BATCH_RESERVE_BYTES = 64 * 1024;
/** Items of a batch besides the chunks: the cull, head, three chunk ranges, record and timeline entry. */
const RESERVED_ITEMS = CULL_MAX_ITEMS + 6;
/** Bytes of a chunk's key. */
const CHUNK_KEY_BYTES = 37;
/** A write whose cull lost a race starts over this many times, the last time without a cull. */
const WRITE_ATTEMPTS = 3;
/** A staged upload that lost its record to a concurrent write of the same (rev, tid) starts over this many times. */
const UPLOAD_ATTEMPTS = 3;

/** Where and how a render is written. */
export interface RenderTarget {
  title: string;
  rev: number;
  tid: string;
  /** rev↓ · tid↓. */
  position: Buffer;
  /** Historical renders (kind HISTORICAL) have a table TTL and no timeline. */
  historicalTtlMs?: number;
  ifAbsent: boolean;
}

/** A record to commit: its render, its record's modification, and its chunk removals and puts. */
interface PendingRecord {
  target: RenderTarget;
  recordMod: Modification;
  rest: Modification[];
}

/** Bytes of a late-write entry (key and value). */
const LATE_ENTRY_BYTES = 1 + POSITION_BYTES + 8;
/**
 * What the renders of one batched update may take: the batch limits less room for the head and the
 * supersession entry, and the bytes of a cull (a cull whose items do not fit is left to a later write).
 */
const BATCH_BUDGET = { bytes: MAX_BATCH_BYTES - BATCH_RESERVE_BYTES, items: MAX_BATCH_ITEMS - 2 };

/** A render's key kinds (hot or historical), its record's key, and its chunks with their keys. */
function keysOf(target: RenderTarget, encoded: EncodedRender): { kinds: { record: number; chunk: number }; record: Buffer; chunks: [Buffer, Buffer][] } {
  const kinds = target.historicalTtlMs === undefined ? { record: KIND.RENDER, chunk: KIND.CHUNK } : { record: KIND.HISTORICAL, chunk: KIND.HISTORICAL_CHUNK };
  const chunks: [Buffer, Buffer][] = encoded.chunks.map((c, i) => [chunkKey(kinds.chunk, target.position, encoded.upload!, i), c]);
  return { kinds, record: recordKey(kinds.record, target.position), chunks };
}

/** The condition on a staged upload's record: it must still be as it was when the upload began. */
class RecordChanged extends Error {}

/** Writes encoded renders (see the module comment). */
export class RenderWriter {
  constructor(
    private readonly table: Table,
    private readonly clock: () => number,
    private readonly windowMs: number,
    /** With an archive: what a cull removes is archived first (archiving.ts). */
    private readonly archiver?: Archiver,
  ) {}

  /**
   * Writes `encoded` at `target`.
   * @throws RenderExistsError when `ifAbsent` and the (rev, tid) exists.
   */
  async write(target: RenderTarget, encoded: EncodedRender): Promise<void> {
    const { kinds, record, chunks } = keysOf(target, encoded);
    const fits = Math.floor((MAX_BATCH_BYTES - BATCH_RESERVE_BYTES - record.length - encoded.record.length) / (CHUNK_KEY_BYTES + (chunks[0]?.[1].length ?? 0)));
    if (chunks.length <= Math.min(fits, MAX_BATCH_ITEMS - RESERVED_ITEMS)) {
      const ttlMs = target.historicalTtlMs;
      const recordMod: Modification = target.ifAbsent ? { type: 'insert', key: record, value: encoded.record, ttlMs } : { type: 'put', key: record, value: encoded.record, ttlMs };
      const previous = encoded.upload === null ? null : await this.uploadOf(target.title, record);
      await this.commit(target.title, [{ target, recordMod, rest: this.withUploadRemoval(target, kinds.chunk, encoded.upload, previous, chunks) }]);
      return;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await this.writeStaged(target, encoded, record, chunks, fits, kinds.chunk);
        return;
      } catch (err) {
        if (!(err instanceof RecordChanged) || attempt >= UPLOAD_ATTEMPTS) throw err instanceof RecordChanged ? err.cause : err;
      }
    }
  }

  /** The upload named by the record at `record`, or null when there is none or its bodies are inline. */
  private async uploadOf(title: string, record: Buffer): Promise<Buffer | null> {
    const entry = await this.table.get(title, record);
    return entry === null ? null : decodeRecord(entry.value).upload;
  }

  /**
   * `chunks` as puts, after the removal of the chunks of every other upload of the same (rev, tid) but
   * `previous` (the upload of the record this write replaces). A reader reads a record and then its
   * chunks: keeping the replaced upload lets one that read the old record just before finish, where
   * removing it made a reader start over at every rewrite and starve under a stream of them. The
   * replaced upload goes with the next rewrite (or the render's cull): a rewritten chunked render
   * holds at most one more upload than its own.
   */
  private withUploadRemoval(target: RenderTarget, chunkKind: number, upload: Buffer | null, previous: Buffer | null, chunks: [Buffer, Buffer][]): Modification[] {
    const all = keyOf(chunkKind, target.position);
    const ttlMs = target.historicalTtlMs;
    const puts = chunks.map(([key, value]): Modification => ({ type: 'put', key, value, ttlMs }));
    if (upload === null) return [{ type: 'removeRange', prefix: all }, ...puts];
    const kept = [upload, previous].filter((u): u is Buffer => u !== null).map((u) => keyOf(chunkKind, target.position, u));
    kept.sort(compareBytes);
    const removals: Modification[] = [];
    let from = all;
    for (const prefix of kept) {
      if (compareBytes(from, prefix) < 0) removals.push({ type: 'removeRange', from, to: prefix });
      from = after(prefix);
    }
    removals.push({ type: 'removeRange', from, to: after(all) });
    return [...removals, ...puts];
  }

  /** A large render: leading chunks in batches of their own, then the commit with the rest. */
  private async writeStaged(target: RenderTarget, encoded: EncodedRender, record: Buffer, chunks: [Buffer, Buffer][], fits: number, chunkKind: number): Promise<void> {
    const before = await this.table.get(target.title, record);
    if (before !== null && target.ifAbsent) throw new RenderExistsError(target.title, target.rev, target.tid);
    const staged = chunks.length - Math.max(1, fits);
    const perBatch = Math.floor((MAX_BATCH_BYTES - BATCH_RESERVE_BYTES) / (CHUNK_KEY_BYTES + chunks[0][1].length));
    const ttl = target.historicalTtlMs === undefined ? undefined : { ttlMs: target.historicalTtlMs };
    try {
      for (let i = 0; i < staged; i += perBatch) await this.table.putAll(target.title, chunks.slice(i, Math.min(i + perBatch, staged)), ttl);
      const recordMod: Modification = target.ifAbsent
        ? { type: 'insert', key: record, value: encoded.record, ttlMs: target.historicalTtlMs }
        : { type: 'put', key: record, value: encoded.record, version: before?.version ?? Version.NOT_EXISTS, ttlMs: target.historicalTtlMs };
      const previous = before === null ? null : decodeRecord(before.value).upload;
      await this.commit(target.title, [{ target, recordMod, rest: this.withUploadRemoval(target, chunkKind, encoded.upload, previous, chunks.slice(staged)) }], true);
    } catch (err) {
      // Best-effort: the chunks of a failed upload are named by no record.
      await this.table.update(target.title, [{ type: 'removeRange', prefix: keyOf(chunkKind, target.position, encoded.upload!) }]).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Writes hot renders of one page (`title` of every target, none with a historical TTL), in order:
   * as many as fit go in one update (see the module comment), a render too large to share one is
   * written alone in its turn. A later render of the same (rev, tid) wins, as with single writes.
   * @throws RenderExistsError for the first `ifAbsent` render that exists; the renders of its update
   *   are not written, those of earlier updates are.
   */
  async writeAll(title: string, renders: { target: RenderTarget; encoded: EncodedRender }[]): Promise<void> {
    let batch: PendingRecord[] = [];
    let items = 0;
    let bytes = 0;
    const flush = async (): Promise<void> => {
      if (batch.length > 0) await this.commit(title, batch);
      batch = [];
      items = 0;
      bytes = 0;
    };
    for (const { target, encoded } of renders) {
      const { record, chunks } = keysOf(target, encoded);
      // Its record, chunks, chunk ranges (one, or up to three around the kept uploads) and a late-write entry.
      const size = record.length + encoded.record.length + chunks.reduce((n, [k, v]) => n + k.length + v.length, 0) + 3 * 2 * (1 + POSITION_BYTES + 8) + LATE_ENTRY_BYTES;
      const count = chunks.length + (encoded.upload === null ? 1 : 3) + 2;
      if (size > BATCH_BUDGET.bytes || count > BATCH_BUDGET.items) {
        await flush();
        await this.write(target, encoded);
        continue;
      }
      // (A repeat of a render in the batch goes in the next update: one update names a key once.)
      if (bytes + size > BATCH_BUDGET.bytes || items + count > BATCH_BUDGET.items || batch.some((b) => b.target.position.equals(target.position))) await flush();
      // Read after that flush, so that a repeat keeps the upload of the render it replaces.
      const previous = encoded.upload === null ? null : await this.uploadOf(title, record);
      const rest = this.withUploadRemoval(target, KIND.CHUNK, encoded.upload, previous, chunks);
      const recordMod: Modification = target.ifAbsent ? { type: 'insert', key: record, value: encoded.record } : { type: 'put', key: record, value: encoded.record };
      batch.push({ target, recordMod, rest });
      items += count;
      bytes += size;
    }
    await flush();
  }

  /**
   * Applies the records with their `rest` (chunk removals and puts) in one update, with their
   * timeline entries and a cull for hot renders; a cull that lost a race is retried, at last without
   * a cull.
   */
  private async commit(title: string, records: PendingRecord[], staged = false): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { mods, recordIndexes, headIndex } = await this.batchOf(title, records, attempt < WRITE_ATTEMPTS);
      try {
        await this.table.update(title, mods);
        return;
      } catch (err) {
        if (!(err instanceof ConditionalTableUpdateError)) throw err;
        const failed = err.index === undefined ? undefined : records[recordIndexes.indexOf(err.index)]?.target;
        if (failed?.ifAbsent) throw new RenderExistsError(title, failed.rev, failed.tid, { cause: err });
        if (failed && staged) throw new RecordChanged('the record changed during the upload', { cause: err });
        if (err.index !== headIndex || attempt >= WRITE_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * The modifications of one commit: [cull…, head?, (rest…, record, late entry?) per record,
   * supersession entry?] — a record's late entry when it is below the latest render so far, the
   * supersession entry for the highest render the records superseded.
   */
  private async batchOf(title: string, records: PendingRecord[], cull: boolean): Promise<{ mods: Modification[]; recordIndexes: number[]; headIndex: number }> {
    const recordIndexes: number[] = [];
    if (records[0].target.historicalTtlMs !== undefined) {
      const mods: Modification[] = [];
      for (const r of records) recordIndexes.push(mods.push(...r.rest, r.recordMod) - 1);
      return { mods, recordIndexes, headIndex: -1 };
    }
    const now = this.clock();
    const cutoff = now - this.windowMs;
    const [latest, timeline] = await Promise.all([this.latestPosition(title), readTimeline(this.table, title, cutoff)]);
    const own = records.map((r) => r.target.position);
    let culls = cull ? planCull(timeline, cutoff, own) : [];
    // A batch that leaves no room for the cull goes without it (a later write culls).
    if (culls.length + records.reduce((n, r) => n + r.rest.length + 2, 0) + 2 > MAX_BATCH_ITEMS) culls = [];
    // With an archive, a cull removes only what the archive has acknowledged; else it waits for a later write.
    if (culls.length > 0 && this.archiver && !(await this.archiver.archiveCulled(title, culls))) culls = [];
    const writes: Modification[] = [];
    let current = latest;
    let superseded: Modification | null = null;
    let late = false;
    for (const r of records) {
      const { entry, late: isLate } = supersessionOf(current, r.target.position, now);
      writes.push(...r.rest);
      recordIndexes.push(writes.push(r.recordMod) - 1);
      if (isLate) {
        late = true;
        writes.push(entry!);
      } else if (entry) {
        superseded = entry; // every entry has time `now`, and this one's render is above the earlier ones'
      }
      if (!isLate && entry !== null) current = r.target.position;
      else if (current === null) current = r.target.position;
    }
    const mods: Modification[] = [...culls];
    let headIndex = -1;
    if (culls.length > 0 || late) {
      headIndex = culls.length > 0 ? mods.length : -1;
      mods.push(headUpdate(now, culls.length > 0 ? timeline.head : undefined));
    }
    const offset = mods.length;
    mods.push(...writes);
    if (superseded) mods.push(superseded);
    return { mods, recordIndexes: recordIndexes.map((i) => i + offset), headIndex };
  }

  /** The position (rev↓ · tid↓) of the page's latest render, or null: the first key of kind RENDER. */
  private async latestPosition(title: string): Promise<Buffer | null> {
    for await (const page of this.table.keyIterator(title, { prefix: Buffer.of(KIND.RENDER), maxKeysAtOnce: 1 })) {
      const key = page.items[0]?.key;
      return key ? Buffer.from(key.subarray(1)) : null;
    }
    return null;
  }
}
