/**
 * Chunks: the entries of a key family are stored several to a LevelDB record, in key order.
 *
 * Why: LevelDB's cost is per record (key copy, memtable node, log record, iterator step, a JS
 * Buffer per key and value), so a batch of 100 puts into one family and a scan of a family cost
 * one or a few records instead of 100 or 1,000. Chunk `i` of a family is stored under the data key
 * `dataKey(family, L_i)` and holds exactly the keys in `[L_i, L_{i+1})`; the first chunk has
 * `L_0 = ''` (the family prefix itself), so every key of the family has exactly one chunk: the
 * chunk with the greatest `L_i <= key`. Family-less keys are not chunked (one record per key).
 *
 * Record value: `count u32 | entries`, each entry
 * `keyLen u16 | valueLen u32 | sequence u64 | expiresAt u64 (0 = never) | key | value`, keys strictly
 * ascending (unsigned bytewise). The top bit of `count` (storage format 4) marks the first chunk of a
 * family that has no other chunk ({@link SOLE_CHUNK_FLAG}): a writer or reader that finds it by one
 * exact (bloom-filtered) LevelDB get knows the whole family without a seek. A record without the bit
 * says nothing (format 3 never set it; a family that shrank back to one chunk may lack it).
 */
import { readU64, writeValueHeader } from '../key-codec';

/** One entry of a chunk; `key` and `value` may be views into the record they were decoded from. */
export interface ChunkEntry {
  key: Buffer;
  sequence: number;
  /** ms since the epoch; 0 = never. */
  expiresAt: number;
  value: Buffer;
  /** Set by {@link decodeChunk}: the record the entry was read from and where its bytes start, so an unchanged entry is copied, not re-encoded. */
  source?: Buffer;
  offset?: number;
}

/**
 * Bytes of a chunk's entry header: key length (u16), value length (u32), sequence (u64) and expiry
 * (u64, ms; 0 = never), big-endian, then the key and the value.
 */
export const CHUNK_ENTRY_HEADER_BYTES = 22;
const SEQUENCE_AT = 6;
const EXPIRES_AT = 14;

/** The sequence of the entry of `record` that starts at `at`. */
export function entrySequence(record: Buffer, at: number): number {
  return readU64(record, at + SEQUENCE_AT);
}

/** The expiry (ms since the epoch; 0 = never) of the entry of `record` that starts at `at`. */
export function entryExpiresAt(record: Buffer, at: number): number {
  return readU64(record, at + EXPIRES_AT);
}
/** A chunk is split once its entries would take more than this many bytes (an entry larger than this gets a chunk alone). */
export const MAX_CHUNK_BYTES = 16 * 1024;
/** A chunk is split once it would hold more entries than this. */
export const MAX_CHUNK_ENTRIES = 128;

/** Stored bytes of one entry. */
export function chunkEntryBytes(e: ChunkEntry): number {
  return CHUNK_ENTRY_HEADER_BYTES + e.key.length + e.value.length;
}

/** The top bit of a record's count: the record is the first chunk of a family with no other chunk. */
export const SOLE_CHUNK_FLAG = 0x8000_0000;

/** Number of entries in a chunk record, without decoding it. */
export function chunkCount(record: Buffer): number {
  return record.readUInt32BE(0) & 0x7fff_ffff;
}

/** True when `record` is marked as its family's only chunk (see {@link SOLE_CHUNK_FLAG}). */
export function isSoleChunk(record: Buffer): boolean {
  return (record[0] & 0x80) !== 0;
}

/** Sets or clears the sole-chunk mark of `record` in place (a record being staged, not yet shared). */
export function markSole(record: Buffer, sole: boolean): void {
  record[0] = sole ? record[0] | 0x80 : record[0] & 0x7f;
}

/** Encodes entries (already in ascending key order) as one chunk record value. */
export function encodeChunk(entries: readonly ChunkEntry[]): Buffer {
  let size = 4;
  for (let i = 0; i < entries.length; i++) size += chunkEntryBytes(entries[i]);
  const out = Buffer.allocUnsafe(size);
  out.writeUInt32BE(entries.length, 0);
  let at = 4;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e.source) {
      const length = CHUNK_ENTRY_HEADER_BYTES + e.key.length + e.value.length;
      e.source.copy(out, at, e.offset!, e.offset! + length);
      at += length;
      continue;
    }
    at = writeChunkEntry(out, at, e.key, e.value, e.sequence, e.expiresAt);
  }
  return out;
}

/** Writes one entry (header, key, value) at `at`; returns where the next one starts. */
function writeChunkEntry(out: Buffer, at: number, key: Uint8Array, value: Uint8Array, sequence: number, expiresAt: number): number {
  at = writeEntryHeader(out, at, key.length, value.length, sequence, expiresAt);
  out.set(key, at);
  at += key.length;
  out.set(value, at);
  return at + value.length;
}

/** The header of an entry whose key has `keyLength` bytes and value `valueLength`; returns where the key goes. */
export function writeEntryHeader(out: Buffer, at: number, keyLength: number, valueLength: number, sequence: number, expiresAt: number): number {
  out[at] = keyLength >>> 8;
  out[at + 1] = keyLength & 0xff;
  out.writeUInt32BE(valueLength, at + 2);
  writeValueHeader(out, at + SEQUENCE_AT, sequence, expiresAt);
  return at + CHUNK_ENTRY_HEADER_BYTES;
}

/**
 * Copies `source[start, end)` to `out` at `at`; returns the end. Short ranges (most keys) byte by
 * byte: Buffer#copy costs ~100 ns of checks per call, a loop over 12 bytes a third of that.
 */
export function copyRange(out: Buffer, at: number, source: Buffer, start: number, end: number): number {
  const n = end - start;
  if (n > 32) source.copy(out, at, start, end);
  else for (let i = 0; i < n; i++) out[at + i] = source[start + i];
  return at + n;
}

/** Stored bytes of the entry of `record` that starts at `at` (header included). */
export function storedEntryBytes(record: Buffer, at: number): number {
  return CHUNK_ENTRY_HEADER_BYTES + ((record[at] << 8) | record[at + 1]) + record.readUInt32BE(at + 2);
}

/** Compares `a[aStart, aEnd)` with `b[bStart, bEnd)`, unsigned bytewise: negative, 0 or positive. */
export function compareRanges(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array, bStart: number, bEnd: number): number {
  const aLength = aEnd - aStart;
  const bLength = bEnd - bStart;
  // Short keys (the usual) compare faster in a loop than through the native call.
  if (aLength > 32 && bLength > 32) return Buffer.compare(a.subarray(aStart, aEnd), b.subarray(bStart, bEnd));
  const n = Math.min(aLength, bLength);
  for (let i = 0; i < n; i++) {
    const d = a[aStart + i] - b[bStart + i];
    if (d !== 0) return d;
  }
  return aLength - bLength;
}

/** Decodes a chunk record value; keys and values are views into `record`. */
export function decodeChunk(record: Buffer): ChunkEntry[] {
  const count = chunkCount(record);
  const out = new Array<ChunkEntry>(count);
  let at = 4;
  for (let i = 0; i < count; i++) {
    const keyLen = (record[at] << 8) | record[at + 1];
    const valueLen = record.readUInt32BE(at + 2);
    const sequence = entrySequence(record, at);
    const expiresAt = entryExpiresAt(record, at);
    const offset = at;
    at += CHUNK_ENTRY_HEADER_BYTES;
    const key = record.subarray(at, at + keyLen);
    at += keyLen;
    out[i] = { key, sequence, expiresAt, value: record.subarray(at, at + valueLen), source: record, offset };
    at += valueLen;
  }
  return out;
}

/** What {@link walkChunk} hands out per entry: key `[keyStart, keyEnd)` and value `[valueStart, valueEnd)` of the record. */
export type EntryVisitor = (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: number, expiresAt: number) => boolean;

/**
 * Visits the entries of a chunk record in key order (or its reverse) without decoding them into
 * objects, until `visit` returns false; returns false when it stopped early.
 */
export function walkChunk(record: Buffer, reverse: boolean, visit: EntryVisitor): boolean {
  const count = chunkCount(record);
  if (!reverse) {
    let at = 4;
    for (let i = 0; i < count; i++) {
      const keyStart = at + CHUNK_ENTRY_HEADER_BYTES;
      const keyEnd = keyStart + ((record[at] << 8) | record[at + 1]);
      const valueEnd = keyEnd + record.readUInt32BE(at + 2);
      if (!visit(keyStart, keyEnd, keyEnd, valueEnd, entrySequence(record, at), entryExpiresAt(record, at))) return false;
      at = valueEnd;
    }
    return true;
  }
  const offsets = new Array<number>(count);
  let at = 4;
  for (let i = 0; i < count; i++) {
    offsets[i] = at;
    at += CHUNK_ENTRY_HEADER_BYTES + ((record[at] << 8) | record[at + 1]) + record.readUInt32BE(at + 2);
  }
  for (let i = count - 1; i >= 0; i--) {
    const o = offsets[i];
    const keyStart = o + CHUNK_ENTRY_HEADER_BYTES;
    const keyEnd = keyStart + ((record[o] << 8) | record[o + 1]);
    if (!visit(keyStart, keyEnd, keyEnd, keyEnd + record.readUInt32BE(o + 2), entrySequence(record, o), entryExpiresAt(record, o))) return false;
  }
  return true;
}

/**
 * The last key of a chunk record, walking only the entry headers; null when an entry has expired by
 * `now` (then the caller decodes it all), undefined for an empty chunk.
 */
export function lastLiveKey(record: Buffer, now: number): Buffer | null | undefined {
  const count = chunkCount(record);
  let at = 4;
  let keyAt = -1;
  let keyLen = 0;
  for (let i = 0; i < count; i++) {
    keyLen = (record[at] << 8) | record[at + 1];
    const valueLen = record.readUInt32BE(at + 2);
    const expiresAt = entryExpiresAt(record, at);
    if (expiresAt !== 0 && expiresAt <= now) return null;
    keyAt = at + CHUNK_ENTRY_HEADER_BYTES;
    at = keyAt + keyLen + valueLen;
  }
  return keyAt < 0 ? undefined : record.subarray(keyAt, keyAt + keyLen);
}

/**
 * Index of `key` in sorted `entries`, or `-(insertion point) - 1` when absent.
 */
export function searchChunk(entries: readonly ChunkEntry[], key: Uint8Array): number {
  let lo = 0;
  let hi = entries.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = Buffer.compare(entries[mid].key, key);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -lo - 1;
}

/**
 * Cuts the entries of an over-full chunk into pieces within the limits, of about equal size (the way
 * a B-tree splits a node: an even split leaves room on both sides, so inserts in the middle of a
 * family do not keep splitting off single entries). An entry over {@link MAX_CHUNK_BYTES} gets a
 * piece alone. Entries within the limits come back as one piece.
 *
 * `appended`: the new entries all went past the old last key (a family growing at its end, like
 * revisions or a log). Then the pieces are filled to the limits from the left instead, because the
 * left ones will not grow again; an even split would leave such families half full.
 */
export function splitChunk(entries: readonly ChunkEntry[], appended = false): ChunkEntry[][] {
  const starts = pieceStarts(entries.length, (i) => chunkEntryBytes(entries[i]), appended);
  if (starts.length === 1) return [entries as ChunkEntry[]];
  return starts.map((start, p) => entries.slice(start, p + 1 < starts.length ? starts[p + 1] : entries.length));
}

/**
 * Where the pieces of {@link splitChunk} start, for `count` entries in key order of `sizeOf(i)`
 * stored bytes each: `[0]` when they fit one chunk.
 */
export function pieceStarts(count: number, sizeOf: (i: number) => number, appended = false): number[] {
  let bytes = 0;
  for (let i = 0; i < count; i++) bytes += sizeOf(i);
  if (count <= MAX_CHUNK_ENTRIES && bytes <= MAX_CHUNK_BYTES) return [0];
  const pieces = appended ? 1 : Math.max(Math.ceil(count / MAX_CHUNK_ENTRIES), Math.ceil(bytes / MAX_CHUNK_BYTES));
  const targetCount = appended ? MAX_CHUNK_ENTRIES : Math.ceil(count / pieces);
  const targetBytes = appended ? MAX_CHUNK_BYTES : Math.min(MAX_CHUNK_BYTES, Math.ceil(bytes / pieces));
  const starts = [0];
  let curCount = 0;
  let curBytes = 0;
  for (let i = 0; i < count; i++) {
    const size = sizeOf(i);
    if (curCount > 0 && (curCount >= targetCount || curBytes + size > MAX_CHUNK_BYTES || curBytes >= targetBytes)) {
      starts.push(i);
      curCount = 0;
      curBytes = 0;
    }
    curCount++;
    curBytes += size;
  }
  return starts;
}
