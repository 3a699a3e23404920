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
 */
import { ConditionalTableUpdateError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import { MAX_BATCH_BYTES, MAX_BATCH_ITEMS } from '../limits';
import type { TableModification } from '../types';
import { Version } from '../version';
import { RenderExistsError } from './errors';
import type { Archiver } from './archiving';
import { after, chunkKey, keyOf, KIND, recordKey } from './key-layout';
import { EncodedRender } from './render-codec';
import { CULL_MAX_ITEMS, headUpdate, planCull, readTimeline, supersessionOf } from './retention';

type Table = KeyValueTable<Uint8Array, Uint8Array>;
type Modification = TableModification<Uint8Array, Uint8Array>;

/** Batch bytes kept free for the cull, the head and the timeline entry. */
export const BATCH_RESERVE_BYTES = 64 * 1024;
/** Items of a batch besides the chunks: the cull, head, two chunk ranges, record and timeline entry. */
const RESERVED_ITEMS = CULL_MAX_ITEMS + 5;
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
    const kinds = target.historicalTtlMs === undefined ? { record: KIND.RENDER, chunk: KIND.CHUNK } : { record: KIND.HISTORICAL, chunk: KIND.HISTORICAL_CHUNK };
    const record = recordKey(kinds.record, target.position);
    const chunks: [Buffer, Buffer][] = encoded.chunks.map((c, i) => [chunkKey(kinds.chunk, target.position, encoded.upload!, i), c]);
    const fits = Math.floor((MAX_BATCH_BYTES - BATCH_RESERVE_BYTES - record.length - encoded.record.length) / (CHUNK_KEY_BYTES + (chunks[0]?.[1].length ?? 0)));
    if (chunks.length <= Math.min(fits, MAX_BATCH_ITEMS - RESERVED_ITEMS)) {
      const ttlMs = target.historicalTtlMs;
      const recordMod: Modification = target.ifAbsent ? { type: 'insert', key: record, value: encoded.record, ttlMs } : { type: 'put', key: record, value: encoded.record, ttlMs };
      await this.commit(target, recordMod, this.withUploadRemoval(target, kinds.chunk, encoded.upload, chunks));
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

  /** `chunks` as puts, after the removal of every other upload's chunks of the same (rev, tid). */
  private withUploadRemoval(target: RenderTarget, chunkKind: number, upload: Buffer | null, chunks: [Buffer, Buffer][]): Modification[] {
    const all = keyOf(chunkKind, target.position);
    const ttlMs = target.historicalTtlMs;
    const puts = chunks.map(([key, value]): Modification => ({ type: 'put', key, value, ttlMs }));
    if (upload === null) return [{ type: 'removeRange', prefix: all }, ...puts];
    const mine = keyOf(chunkKind, target.position, upload);
    return [{ type: 'removeRange', from: all, to: mine }, { type: 'removeRange', from: after(mine), to: after(all) }, ...puts];
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
      await this.commit(target, recordMod, this.withUploadRemoval(target, chunkKind, encoded.upload, chunks.slice(staged)), true);
    } catch (err) {
      // Best-effort: the chunks of a failed upload are named by no record.
      await this.table.update(target.title, [{ type: 'removeRange', prefix: keyOf(chunkKind, target.position, encoded.upload!) }]).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Applies the record with `rest` (chunk removals and puts) in one update, with the timeline entry
   * and a cull for hot renders; a cull that lost a race is retried, at last without a cull.
   */
  private async commit(target: RenderTarget, recordMod: Modification, rest: Modification[], staged = false): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { mods, recordIndex, headIndex } = await this.batchOf(target, recordMod, rest, attempt < WRITE_ATTEMPTS);
      try {
        await this.table.update(target.title, mods);
        return;
      } catch (err) {
        if (!(err instanceof ConditionalTableUpdateError)) throw err;
        if (err.index === recordIndex && target.ifAbsent) throw new RenderExistsError(target.title, target.rev, target.tid, { cause: err });
        if (err.index === recordIndex && staged) throw new RecordChanged('the record changed during the upload', { cause: err });
        if (err.index !== headIndex || attempt >= WRITE_ATTEMPTS) throw err;
      }
    }
  }

  /** The modifications of one commit: [cull…, head?, rest…, record, timeline entry?]. */
  private async batchOf(target: RenderTarget, recordMod: Modification, rest: Modification[], cull: boolean): Promise<{ mods: Modification[]; recordIndex: number; headIndex: number }> {
    if (target.historicalTtlMs !== undefined) return { mods: [...rest, recordMod], recordIndex: rest.length, headIndex: -1 };
    const now = this.clock();
    const cutoff = now - this.windowMs;
    const [latest, timeline] = await Promise.all([this.latestPosition(target.title), readTimeline(this.table, target.title, cutoff)]);
    const { entry, late } = supersessionOf(latest, target.position, now);
    let culls = cull ? planCull(timeline, cutoff, target.position) : [];
    // With an archive, a cull removes only what the archive has acknowledged; else it waits for a later write.
    if (culls.length > 0 && this.archiver && !(await this.archiver.archiveCulled(target.title, culls))) culls = [];
    const mods: Modification[] = [...culls];
    let headIndex = -1;
    if (culls.length > 0 || late) {
      headIndex = culls.length > 0 ? mods.length : -1;
      mods.push(headUpdate(now, culls.length > 0 ? timeline.head : undefined));
    }
    mods.push(...rest);
    const recordIndex = mods.push(recordMod) - 1;
    if (entry) mods.push(entry);
    return { mods, recordIndex, headIndex };
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
