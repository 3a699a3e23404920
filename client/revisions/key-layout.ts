/**
 * The keys of a page's key family. One family per page (the title as given, e.g. `en.wikipedia.org/Main_Page`),
 * so that a render, its parts, its supersession record and the range delete of expired data all go
 * in one atomic update, and the family iterates in order. A key starts with one byte, its kind, so
 * that each kind of record lives in a range of its own and a prefix iteration or a range delete
 * touches one kind only:
 *
 * ```
 * kind  record            key (after the kind byte)                    value
 * 0x10  render            rev↓ (8) · tid↓ (16)                          render record (headers, part directory, bodies or chunk count)
 * 0x11  historical render rev↓ · tid↓                                   the same, with its expiry time (and a table ttl)
 * 0x20  chunk             rev↓ · tid↓ · upload (8) · index (4, BE)      up to MAX_VALUE_LENGTH bytes of a large render's bodies
 * 0x21  historical chunk  the same                                      the same
 * 0x2f  head              (none)                                        time of the last late write or cull; its version guards culls
 * 0x30  late write        rev↓ · tid↓                                   T (8, BE): written at T below the latest render
 * 0x31  supersession      T (8, BE) · rev↓ · tid↓                       (empty) at T every render ≤ (rev, tid) was superseded
 * ```
 *
 * `rev↓` is 2^53 − 1 − rev as 8 bytes big-endian; `tid↓` is the v1 UUID rearranged so that its
 * bytes sort by (timestamp, clock sequence, node) — time_hi_and_version, time_mid, time_low,
 * clock_seq, node — then every byte complemented. The family's keys sort unsigned bytewise, so within
 * a kind a higher (rev, tid) comes first: the first key of kind 0x10 is the latest render of the
 * latest revision (`getLatest` reads one key of one iterator page), the first key with prefix
 * `0x10 · rev↓` is the latest render of that revision. A render's parts and large bodies never sit in
 * the 0x10 range — they go inline in its record or in chunks of kind 0x20 — so that stays one key.
 * The timeline (0x2f–0x31) follows the data, so that one iteration from 0x2f up to `0x31 · cutoff`
 * reads the head, every late write and every supersession that has expired, oldest first.
 */

/** The record kinds (the first byte of every key). */
export const KIND = {
  RENDER: 0x10,
  HISTORICAL: 0x11,
  CHUNK: 0x20,
  HISTORICAL_CHUNK: 0x21,
  HEAD: 0x2f,
  LATE: 0x30,
  SUPERSEDED: 0x31,
} as const;

/** The greatest revision number (2^53 − 1: a safe integer). */
export const MAX_REV = Number.MAX_SAFE_INTEGER;

/** Bytes of a position: rev↓ and tid↓. */
export const POSITION_BYTES = 24;
const TWO_32 = 2 ** 32;

/** Writes a non-negative safe integer as 8 bytes big-endian. */
export function writeUint64(out: Buffer, offset: number, n: number): void {
  out.writeUInt32BE(Math.floor(n / TWO_32), offset);
  out.writeUInt32BE(n % TWO_32, offset + 4);
}

/** Reads 8 bytes big-endian as a number (exact up to 2^53 − 1). */
export function readUint64(bytes: Uint8Array, offset: number): number {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return b.readUInt32BE(offset) * TWO_32 + b.readUInt32BE(offset + 4);
}

/** A non-negative safe integer as 8 bytes big-endian. */
export function uint64(n: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  writeUint64(out, 0, n);
  return out;
}

/** Writes rev↓ (descending order) at `offset`. */
function writeRev(out: Buffer, offset: number, rev: number): void {
  writeUint64(out, offset, MAX_REV - rev);
}

/** Writes tid↓ (descending by timestamp, clock sequence, node) at `offset`; `tid` is canonical. */
function writeTid(out: Buffer, offset: number, tid: string): void {
  const hex = tid.slice(14, 18) + tid.slice(9, 13) + tid.slice(0, 8) + tid.slice(19, 23) + tid.slice(24, 36);
  out.write(hex, offset, 16, 'hex');
  for (let i = offset; i < offset + 16; i++) out[i] = ~out[i] & 0xff;
}

function readTid(bytes: Uint8Array, offset: number): string {
  const b = Buffer.allocUnsafe(16);
  for (let i = 0; i < 16; i++) b[i] = ~bytes[offset + i] & 0xff;
  const h = b.toString('hex');
  return `${h.slice(8, 16)}-${h.slice(4, 8)}-${h.slice(0, 4)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The 24 bytes rev↓ · tid↓ of a render (`tid` canonical). */
export function positionOf(rev: number, tid: string): Buffer {
  const out = Buffer.allocUnsafe(POSITION_BYTES);
  writeRev(out, 0, rev);
  writeTid(out, 8, tid);
  return out;
}

/** The (rev, tid) of the position at `offset` of a key. */
export function readPosition(key: Uint8Array, offset: number): { rev: number; tid: string } {
  return { rev: MAX_REV - readUint64(key, offset), tid: readTid(key, offset + 8) };
}

/** `kind` followed by `parts`. */
export function keyOf(kind: number, ...parts: Uint8Array[]): Buffer {
  return Buffer.concat([Buffer.of(kind), ...parts]);
}

/** The key of a render record (kind RENDER or HISTORICAL). */
export function recordKey(kind: number, position: Uint8Array): Buffer {
  return keyOf(kind, position);
}

/** The prefix of every render record of one revision. */
export function revisionPrefix(kind: number, rev: number): Buffer {
  const out = Buffer.allocUnsafe(9);
  out[0] = kind;
  writeRev(out, 1, rev);
  return out;
}

/** The key of chunk `index` of an upload of a render (kind CHUNK or HISTORICAL_CHUNK). */
export function chunkKey(kind: number, position: Uint8Array, upload: Uint8Array, index: number): Buffer {
  const out = Buffer.allocUnsafe(1 + POSITION_BYTES + 8 + 4);
  out[0] = kind;
  out.set(position, 1);
  out.set(upload, 1 + POSITION_BYTES);
  out.writeUInt32BE(index, 1 + POSITION_BYTES + 8);
  return out;
}

/** The key of the timeline's head. */
export const HEAD_KEY = Buffer.of(KIND.HEAD);

/** The key of a late write's timeline entry. */
export function lateKey(position: Uint8Array): Buffer {
  return keyOf(KIND.LATE, position);
}

/** The key of a supersession entry: at `time`, every render up to `position` was superseded. */
export function supersessionKey(time: number, position: Uint8Array): Buffer {
  return keyOf(KIND.SUPERSEDED, uint64(time), position);
}

/**
 * The least byte string greater than every string that starts with `prefix` (so `[prefix,
 * after(prefix))` is exactly the keys with that prefix); empty when there is none (all 0xff).
 */
export function after(prefix: Uint8Array): Buffer {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] !== 0xff) {
      out[i]++;
      return out.subarray(0, i + 1);
    }
  }
  return Buffer.alloc(0);
}

/** Unsigned bytewise comparison. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}
