/**
 * Changes feed sequences: opaque strings holding, for every partition, the feed position read up to
 * (a sequence of that partition's segment), plus a fingerprint of the segments they belong to, so a
 * sequence of a table since deleted and created again reads from the beginning rather than skipping.
 *
 * ```
 * base64url( format (1) = 1 · fingerprint (4, BE) · partition count (varint) · positions (varints) · check (4, BE: FNV-1a of the rest) )
 * ```
 */
import { InvalidArgumentError } from '../errors';

const FORMAT = 1;
/** The longest sequence accepted: 1,024 partitions of 10-byte varints, encoded. */
const MAX_SEQUENCE_LENGTH = 16_384;

/** A decoded sequence. */
export interface FeedPosition {
  fingerprint: number;
  positions: bigint[];
}

/** FNV-1a (32 bits) of bytes or of a string's UTF-16 code units. */
export function fnv1a(data: Uint8Array | string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) {
    h ^= typeof data === 'string' ? data.charCodeAt(i) : data[i];
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The fingerprint of the feed families' segments, in partition order. */
export function segmentsFingerprint(segmentIds: readonly string[]): number {
  return fnv1a(segmentIds.join(','));
}

function pushVarint(out: number[], n: bigint): void {
  if (n <= BigInt(Number.MAX_SAFE_INTEGER)) {
    let v = Number(n);
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
    return;
  }
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
}

/** Encodes a position. */
export function encodeSequence(p: FeedPosition): string {
  const out: number[] = [FORMAT, (p.fingerprint >>> 24) & 0xff, (p.fingerprint >>> 16) & 0xff, (p.fingerprint >>> 8) & 0xff, p.fingerprint & 0xff];
  pushVarint(out, BigInt(p.positions.length));
  for (const n of p.positions) pushVarint(out, n);
  const check = fnv1a(Uint8Array.from(out));
  out.push((check >>> 24) & 0xff, (check >>> 16) & 0xff, (check >>> 8) & 0xff, check & 0xff);
  return Buffer.from(out).toString('base64url');
}

/** Reads varints from `b` at `at.i`. */
function readVarint(b: Buffer, at: { i: number }): bigint {
  let n = 0n;
  for (let shift = 0n; shift <= 63n; shift += 7n) {
    const byte = b[at.i++];
    if (byte === undefined) throw new Error('ends early');
    n |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return n;
  }
  throw new Error('varint too long');
}

/**
 * Decodes a sequence of a feed of `partitionCount` partitions.
 * @throws InvalidArgumentError for a string that is not a sequence of such a feed (naming `field`).
 */
export function decodeSequence(text: unknown, partitionCount: number, field: string): FeedPosition {
  const bad = (why: string) => new InvalidArgumentError(`${field} is not a sequence of this changes feed: ${why}`);
  if (typeof text !== 'string' || text.length === 0) throw bad(`expected a non-empty string, got ${typeof text === 'string' ? 'an empty string' : typeof text}`);
  if (text.length > MAX_SEQUENCE_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw bad('malformed');
  const b = Buffer.from(text, 'base64url');
  if (b.length < 10 || b[0] !== FORMAT || fnv1a(b.subarray(0, b.length - 4)) !== b.readUInt32BE(b.length - 4)) throw bad('malformed');
  const at = { i: 5 };
  try {
    const count = readVarint(b, at);
    if (count !== BigInt(partitionCount)) throw bad(`it has ${count} partitions, the table ${partitionCount}`);
    const positions: bigint[] = [];
    for (let p = 0; p < partitionCount; p++) positions.push(readVarint(b, at));
    if (at.i !== b.length - 4) throw new Error('trailing bytes');
    return { fingerprint: b.readUInt32BE(1), positions };
  } catch (err) {
    throw err instanceof InvalidArgumentError ? err : bad('malformed');
  }
}
