/**
 * Point lookups in chunk records without decoding them (chunk-codec.ts): a lookup walks the entry
 * headers and compares keys where they lie in the record, and a record asked for several keys (one
 * Get of many keys of a family) has its entry offsets found once and searched by bisection.
 *
 * Why: a point read used to decode the whole chunk (an object and two views per entry, up to 128)
 * for each key it looked up, so a Get of n keys of one chunk decoded it n times.
 */
import { CHUNK_ENTRY_HEADER_BYTES, chunkCount, compareRanges, entryExpiresAt, entrySequence } from './chunk-codec';

/** One stored entry found by a point read; `value` is a view into the record. */
export interface FoundEntry {
  value: Buffer;
  sequence: number;
}

/** {@link seekEntry}: `key` is not stored, and a stored key is greater (the record's range holds it). */
export const ABSENT_WITHIN = -1;
/** {@link seekEntry}: `key` is greater than every key of the record (or the record is empty). */
export const ABSENT_BEYOND = -2;

function keyLengthAt(record: Buffer, at: number): number {
  return (record[at] << 8) | record[at + 1];
}

/**
 * Where the entry of `key` starts in `record`, walking the headers in key order; else
 * {@link ABSENT_WITHIN} or {@link ABSENT_BEYOND}.
 */
export function seekEntry(record: Buffer, key: Uint8Array): number {
  const count = chunkCount(record);
  let at = 4;
  for (let i = 0; i < count; i++) {
    const keyStart = at + CHUNK_ENTRY_HEADER_BYTES;
    const keyEnd = keyStart + keyLengthAt(record, at);
    const c = compareRanges(record, keyStart, keyEnd, key, 0, key.length);
    if (c === 0) return at;
    if (c > 0) return ABSENT_WITHIN;
    at = keyEnd + record.readUInt32BE(at + 2);
  }
  return ABSENT_BEYOND;
}

/** The entry of `record` that starts at `at`, if it is live at `now`. */
export function entryAt(record: Buffer, at: number, now: number): FoundEntry | undefined {
  const expiresAt = entryExpiresAt(record, at);
  if (expiresAt !== 0 && expiresAt <= now) return undefined;
  const valueStart = at + CHUNK_ENTRY_HEADER_BYTES + keyLengthAt(record, at);
  return { value: record.subarray(valueStart, valueStart + record.readUInt32BE(at + 2)), sequence: entrySequence(record, at) };
}

/** The live entry of `key` in chunk record `record` (null: no record), if any. */
export function findIn(record: Buffer | null, key: Uint8Array, now: number): FoundEntry | undefined {
  if (!record) return undefined;
  const at = seekEntry(record, key);
  return at >= 0 ? entryAt(record, at, now) : undefined;
}

/** Where each entry of `record` starts, in key order. */
function entryOffsets(record: Buffer): Int32Array {
  const count = chunkCount(record);
  const out = new Int32Array(count);
  let at = 4;
  for (let i = 0; i < count; i++) {
    out[i] = at;
    at += CHUNK_ENTRY_HEADER_BYTES + keyLengthAt(record, at) + record.readUInt32BE(at + 2);
  }
  return out;
}

function seekIndexed(record: Buffer, offsets: Int32Array, key: Uint8Array): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = offsets[mid];
    const keyStart = at + CHUNK_ENTRY_HEADER_BYTES;
    const c = compareRanges(record, keyStart, keyStart + keyLengthAt(record, at), key, 0, key.length);
    if (c === 0) return at;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return lo < offsets.length ? ABSENT_WITHIN : ABSENT_BEYOND;
}

/**
 * The lookups of one read: the first lookup in a record walks it; a second one in the same record
 * finds its entry offsets once, and every further lookup in it bisects them.
 */
export class ChunkLookups {
  private readonly seen = new Map<Buffer, Int32Array | null>();

  /** {@link seekEntry}, remembering `record` for later lookups in it. */
  seek(record: Buffer, key: Uint8Array): number {
    const offsets = this.seen.get(record);
    if (offsets === undefined) {
      this.seen.set(record, null);
      return seekEntry(record, key);
    }
    if (offsets) return seekIndexed(record, offsets, key);
    const built = entryOffsets(record);
    this.seen.set(record, built);
    return seekIndexed(record, built, key);
  }

  /** {@link findIn}, remembering `record` for later lookups in it. */
  find(record: Buffer | null, key: Uint8Array, now: number): FoundEntry | undefined {
    if (!record) return undefined;
    const at = this.seek(record, key);
    return at >= 0 ? entryAt(record, at, now) : undefined;
  }
}
