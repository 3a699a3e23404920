/**
 * Applying a batch whose keys are strictly ascending to one chunk record, by a merge.
 *
 * Why: most batches name their keys in order (the client sends a family's keys sorted, revisions and
 * logs append). Walking the record's entry headers beside the batch needs no entry objects, no key
 * strings and no map; entries kept as they are stay bytes and are copied in runs when the chunk is
 * written again. A batch in another order is sorted first ({@link inKeyOrder}); one that removes a
 * range goes through `ChunkWork` (chunk-work.ts).
 */
import { CHUNK_ENTRY_HEADER_BYTES, chunkCount, compareRanges, copyRange, entryExpiresAt, entrySequence, pieceStarts, storedEntryBytes, writeEntryHeader } from './chunk-codec';
import type { SegmentState } from '../segments/segment-state';
import { checkCondition } from '../update-stager';
import type { CheckedModification } from '../validation';

/** True when the modifications name strictly ascending keys and none removes a range. */
export function ascendingKeys(mods: readonly CheckedModification[]): boolean {
  for (let i = 0; i < mods.length; i++) {
    if (mods[i].type === 'REMOVE_RANGE') return false;
    if (i > 0 && compareModificationKeys(mods[i], mods[i - 1]) <= 0) return false;
  }
  return true;
}

/**
 * A batch of distinct keys in another order, put in ascending key order for the merge: `mods[k]` is
 * `original[order[k]]`. Conditions are still reported, and sequences still given, in the original
 * (modification) order (family-stager.ts).
 */
export interface KeyOrder {
  mods: CheckedModification[];
  order: number[];
  original: readonly CheckedModification[];
}

/**
 * `original` (distinct keys, whose latin1 forms are `ids`) in ascending key order; undefined when it
 * removes a range (those go through `ChunkWork`). Why: a batch in any order (the documents' feed
 * updates, a render with its timeline entries) merged as it comes rebuilt every entry of each chunk it
 * touched as an object in a map; sorted, it takes the merge (document edits at 64 callers: store CPU
 * per edit 310–348 µs before, 212–296 µs after).
 */
export function inKeyOrder(original: readonly CheckedModification[], ids: readonly (string | undefined)[]): KeyOrder | undefined {
  if (ids.includes(undefined)) return undefined;
  // latin1 strings compare as their bytes do, unsigned: the order of keys in a family.
  const order = Array.from(original, (_, i) => i).sort((a, b) => (ids[a]! < ids[b]! ? -1 : 1));
  return { mods: order.map((i) => original[i]), order, original };
}

function compareModificationKeys(a: CheckedModification, b: CheckedModification): number {
  return compareRanges(a.keySource, a.keyStart, a.keyEnd, b.keySource, b.keyStart, b.keyEnd);
}

/** Sequence and expiry given to each PUT or INSERT of the batch, by modification index. */
export interface Stamps {
  sequences: number[];
  expiries: number[];
}

/**
 * One chunk after the merge: its entries in key order, each either an entry of the old record kept
 * byte for byte or a modification's new entry.
 */
export class ChunkMerge {
  /** Entry `n` of the result: `>= 0` is the offset of a kept entry of `record`, `< 0` is `-(i + 1)` for modification `i`. */
  readonly items: number[] = [];
  /** Something was written, removed or expired. */
  changed = false;
  /** No key went before a key already stored (see splitChunk's `appended`). */
  appendedOnly = true;

  private constructor(
    readonly record: Buffer | null,
    private readonly mods: readonly CheckedModification[],
  ) {}

  /**
   * Merges modifications `[from, to)` (ascending keys, all within this chunk's range) into `record`,
   * checking each one's condition against the live entry it meets. Entries expired by `now` are
   * dropped. Throws the first failing condition (in modification order) before anything is staged.
   */
  static run(seg: SegmentState, record: Buffer | null, mods: readonly CheckedModification[], from: number, to: number, now: number): ChunkMerge {
    const merge = new ChunkMerge(record, mods);
    const items = merge.items;
    const count = record ? chunkCount(record) : 0;
    let at = 4;
    let i = from;
    for (let k = 0; k < count;) {
      const r = record!;
      const keyStart = at + CHUNK_ENTRY_HEADER_BYTES;
      const keyEnd = keyStart + ((r[at] << 8) | r[at + 1]);
      const cmp = i < to ? compareRanges(r, keyStart, keyEnd, mods[i].keySource, mods[i].keyStart, mods[i].keyEnd) : -1;
      if (cmp > 0) {
        // The modification's key is not stored: it goes before this entry.
        merge.add(seg, i, undefined);
        if (mods[i].type !== 'REMOVE') merge.appendedOnly = false;
        i++;
        continue;
      }
      const expiresAt = entryExpiresAt(r, at);
      const live = expiresAt === 0 || expiresAt > now;
      if (cmp === 0) {
        merge.add(seg, i, live ? entrySequence(r, at) : undefined);
        // Replaced, removed, or (expired) dropped: the record changes in every case.
        merge.changed = true;
        i++;
      } else if (live) items.push(at);
      else merge.changed = true;
      at = keyEnd + r.readUInt32BE(at + 2);
      k++;
    }
    for (; i < to; i++) merge.add(seg, i, undefined);
    return merge;
  }

  /** Checks modification `i` against the live sequence of its key and adds its new entry, if any. */
  private add(seg: SegmentState, i: number, current: number | undefined): void {
    const m = this.mods[i];
    checkCondition(seg, m, i, current);
    if (m.type === 'REMOVE') return;
    this.items.push(-(i + 1));
    this.changed = true;
  }

  /** Stored bytes of result entry `n`. */
  private bytesOf(n: number): number {
    const v = this.items[n];
    if (v >= 0) return storedEntryBytes(this.record!, v);
    const m = this.mods[-v - 1];
    return CHUNK_ENTRY_HEADER_BYTES + m.keyLength + m.valueLength;
  }

  /** Where the chunk's pieces start (see `pieceStarts`). */
  pieces(appended: boolean): number[] {
    return pieceStarts(this.items.length, (n) => this.bytesOf(n), appended);
  }

  /** The user key of result entry `n` (a view). */
  keyOf(n: number): Buffer {
    const v = this.items[n];
    if (v < 0) return this.mods[-v - 1].key;
    const keyStart = v + CHUNK_ENTRY_HEADER_BYTES;
    return this.record!.subarray(keyStart, keyStart + ((this.record![v] << 8) | this.record![v + 1]));
  }

  /** True when result entries `[0, end)` are exactly the old record (nothing to write for that piece). */
  keepsRecord(end: number): boolean {
    if (!this.record || end !== chunkCount(this.record) || end === 0) return false;
    for (let n = 0; n < end; n++) if (this.items[n] < 0) return false;
    return true;
  }

  /** Encodes result entries `[start, end)` as a chunk record; kept entries next to each other are copied in one run. */
  encode(start: number, end: number, stamps: Stamps): Buffer {
    let size = 4;
    for (let n = start; n < end; n++) size += this.bytesOf(n);
    const out = Buffer.allocUnsafe(size);
    out.writeUInt32BE(end - start, 0);
    let at = 4;
    for (let n = start; n < end;) {
      const v = this.items[n];
      if (v < 0) {
        const i = -v - 1;
        const m = this.mods[i];
        at = writeEntryHeader(out, at, m.keyLength, m.valueLength, stamps.sequences[i], stamps.expiries[i]);
        at = copyRange(out, at, m.keySource, m.keyStart, m.keyEnd);
        at = copyRange(out, at, m.valueSource, m.valueStart, m.valueEnd);
        n++;
        continue;
      }
      const record = this.record!;
      let runEnd = v + storedEntryBytes(record, v);
      for (n++; n < end && this.items[n] === runEnd; n++) runEnd += storedEntryBytes(record, runEnd);
      record.copy(out, at, v, runEnd);
      at += runEnd - v;
    }
    return out;
  }
}
