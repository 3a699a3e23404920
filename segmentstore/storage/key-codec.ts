/**
 * Storage layout of the segment engine in its one LevelDB. Every key starts with a namespace byte:
 *
 * - `m` → storage format of the database (decimal, see STORAGE_FORMAT in storage-format.ts)
 * - `m | 'c'` → the highest time the store's expiry clock has given (ms u64 BE, see store-clock.ts)
 * - `m | segmentId(8 BE) | 'R'` → segment record (JSON: table, state, createdAtMs)
 * - `m | segmentId(8 BE) | 'S'` → last sequence handed out (u64 BE); kept after a delete so a
 *   re-created segment never reuses a version
 * - `d | segmentId(8 BE) | 'F' | famLen(2 BE) | family UTF-8 | lower bound` → chunk of a key family
 *   (its entries, in key order; the first chunk's lower bound is empty; see chunk-codec.ts)
 * - `d | segmentId(8 BE) | 'N' | key` → entry without a family
 * - `x | expiresAt ms(8 BE) | data key` → expiry index (empty value), read by the sweeper
 *
 * The length prefix makes family prefixes prefix-free, so LevelDB's bytewise order is exactly the
 * unsigned bytewise order of keys within one family. Family-less entry values are a 16-byte header
 * (sequence u64 BE, expiresAt ms u64 BE or 0) followed by the value bytes.
 */

export const NS_META = 0x6d; // 'm'
export const NS_DATA = 0x64; // 'd'
export const NS_EXPIRY = 0x78; // 'x'
const META_RECORD = 0x52; // 'R'
const META_SEQUENCE = 0x53; // 'S'
const DATA_FAMILY = 0x46; // 'F'
const DATA_NO_FAMILY = 0x4e; // 'N'

/** Bytes of the entry value header: sequence (8) + expiresAt (8). */
export const VALUE_HEADER_BYTES = 16;
const TWO_32 = 0x1_0000_0000;

/** Writes a non-negative safe integer as u64 big-endian without a BigInt. */
export function writeU64(buf: Buffer, n: number, offset: number): void {
  buf.writeUInt32BE(Math.floor(n / TWO_32), offset);
  buf.writeUInt32BE(n >>> 0, offset + 4);
}

/** Reads a u64 big-endian written by {@link writeU64} (exact up to 2^53). */
export function readU64(buf: Uint8Array, offset: number): number {
  const view = buf instanceof Buffer ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  return view.readUInt32BE(offset) * TWO_32 + view.readUInt32BE(offset + 4);
}

/** The 8-byte big-endian form of a decimal u64 segment id. */
export function encodeSegmentId(segmentId: string): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeBigUInt64BE(BigInt(segmentId), 0);
  return out;
}

function metaKey(segmentId8: Buffer, kind: number): Buffer {
  const out = Buffer.allocUnsafe(10);
  out[0] = NS_META;
  segmentId8.copy(out, 1);
  out[9] = kind;
  return out;
}

/** Key of the segment record. */
export function segmentRecordKey(segmentId8: Buffer): Buffer {
  return metaKey(segmentId8, META_RECORD);
}

/** Key of the persisted last sequence of a segment. */
export function segmentSequenceKey(segmentId8: Buffer): Buffer {
  return metaKey(segmentId8, META_SEQUENCE);
}

/** Parses a metadata key: the decimal segment id and whether it is the record or the sequence. */
export function decodeMetaKey(key: Buffer): { segmentId: string; kind: 'record' | 'sequence' } | undefined {
  if (key.length !== 10 || key[0] !== NS_META) return undefined;
  const kind = key[9] === META_RECORD ? 'record' : key[9] === META_SEQUENCE ? 'sequence' : undefined;
  if (!kind) return undefined;
  return { segmentId: key.readBigUInt64BE(1).toString(), kind };
}

/** `d | segmentId` — every data key of the segment starts with it. */
export function segmentDataPrefix(segmentId8: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9);
  out[0] = NS_DATA;
  segmentId8.copy(out, 1);
  return out;
}

/**
 * The prefix shared by every key of one family (or of the family-less keys when `family` is empty)
 * of a segment: `d | segmentId | F | famLen | family` or `d | segmentId | N`.
 */
export function familyPrefix(dataPrefix: Buffer, family: string): Buffer {
  if (family === '') {
    const out = Buffer.allocUnsafe(10);
    dataPrefix.copy(out, 0);
    out[9] = DATA_NO_FAMILY;
    return out;
  }
  const famLen = Buffer.byteLength(family, 'utf8');
  const out = Buffer.allocUnsafe(12 + famLen);
  dataPrefix.copy(out, 0);
  out[9] = DATA_FAMILY;
  out.writeUInt16BE(famLen, 10);
  out.write(family, 12, 'utf8');
  return out;
}

/** The storage key of (family, key) in the segment whose data prefix is `dataPrefix`. */
export function dataKey(dataPrefix: Buffer, family: string, key: Uint8Array): Buffer {
  if (family === '') {
    const out = Buffer.allocUnsafe(10 + key.length);
    dataPrefix.copy(out, 0);
    out[9] = DATA_NO_FAMILY;
    out.set(key, 10);
    return out;
  }
  const famLen = Buffer.byteLength(family, 'utf8');
  const out = Buffer.allocUnsafe(12 + famLen + key.length);
  dataPrefix.copy(out, 0);
  out[9] = DATA_FAMILY;
  out.writeUInt16BE(famLen, 10);
  out.write(family, 12, 'utf8');
  out.set(key, 12 + famLen);
  return out;
}

/** Length of the namespace part of a data key (everything before the user key). */
export function dataKeyHeaderLength(storageKey: Uint8Array): number {
  if (storageKey[9] === DATA_NO_FAMILY) return 10;
  return 12 + ((storageKey[10] << 8) | storageKey[11]);
}

/** The key family of a storage data key ('' for a family-less key). */
export function familyOf(storageKey: Buffer): string {
  if (storageKey[9] === DATA_NO_FAMILY) return '';
  return storageKey.toString('utf8', 12, dataKeyHeaderLength(storageKey));
}

/**
 * A data key without its segment prefix (what a Scan position is) split into the family's UTF-8
 * bytes (undefined for a family-less key) and the user key, both views; or, when it is not laid out
 * as one, why not.
 */
export function splitDataKeySuffix(suffix: Buffer): { family: Buffer | undefined; key: Buffer } | string {
  if (suffix[0] === DATA_NO_FAMILY) return { family: undefined, key: suffix.subarray(1) };
  if (suffix[0] !== DATA_FAMILY) return 'it names neither a key family nor the family-less keys';
  const end = 3 + ((suffix[1] << 8) | suffix[2]);
  if (suffix.length < 3 || end > suffix.length) return 'its family length passes its end';
  return { family: suffix.subarray(3, end), key: suffix.subarray(end) };
}

/** The user key inside a storage data key (a view, not a copy). */
export function userKeyOf(storageKey: Buffer): Buffer {
  return storageKey.subarray(dataKeyHeaderLength(storageKey));
}

export { prefixSuccessor } from '../../proto/key-bounds';

/** Encodes an entry value: header (sequence, expiresAt) + value bytes. */
export function encodeValue(sequence: number, expiresAt: number, value: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(VALUE_HEADER_BYTES + value.length);
  writeValueHeader(out, 0, sequence, expiresAt);
  out.set(value, VALUE_HEADER_BYTES);
  return out;
}

/**
 * Writes the 16-byte entry value header at `offset`. Plain byte stores: this runs for every staged
 * write, and the bounds-checked `writeUInt32BE` calls showed up in profiles.
 */
export function writeValueHeader(out: Uint8Array, offset: number, sequence: number, expiresAt: number): void {
  writeU64Bytes(out, offset, sequence);
  writeU64Bytes(out, offset + 8, expiresAt);
}

function writeU64Bytes(out: Uint8Array, offset: number, n: number): void {
  const hi = Math.floor(n / TWO_32);
  const lo = n >>> 0;
  out[offset] = hi >>> 24;
  out[offset + 1] = (hi >>> 16) & 0xff;
  out[offset + 2] = (hi >>> 8) & 0xff;
  out[offset + 3] = hi & 0xff;
  out[offset + 4] = lo >>> 24;
  out[offset + 5] = (lo >>> 16) & 0xff;
  out[offset + 6] = (lo >>> 8) & 0xff;
  out[offset + 7] = lo & 0xff;
}

/** Sequence stored in an entry value. */
export function valueSequence(stored: Buffer): number {
  return readU64(stored, 0);
}

/** Expiry (ms since the epoch, 0 = never) stored in an entry value. */
export function valueExpiresAt(stored: Buffer): number {
  return readU64(stored, 8);
}

/** The value bytes of a stored entry value (a view, not a copy). */
export function valueBytes(stored: Buffer): Buffer {
  return stored.subarray(VALUE_HEADER_BYTES);
}

/** Key of the expiry index entry of `storageKey` expiring at `expiresAt`. */
export function expiryKey(expiresAt: number, storageKey: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9 + storageKey.length);
  out[0] = NS_EXPIRY;
  writeU64(out, expiresAt, 1);
  storageKey.copy(out, 9);
  return out;
}

/** Upper bound (exclusive) of the expiry index entries due at or before `now`. */
export function expiryBound(now: number): Buffer {
  const out = Buffer.allocUnsafe(9);
  out[0] = NS_EXPIRY;
  writeU64(out, now + 1, 1);
  return out;
}

/** Parses an expiry index key into its expiry time and the data key it points at. */
export function decodeExpiryKey(key: Buffer): { expiresAt: number; storageKey: Buffer } {
  return { expiresAt: readU64(key, 1), storageKey: key.subarray(9) };
}

/** Compares two byte strings in unsigned bytewise order. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}
