/**
 * The values of a feed family's entries (key-layout.ts has the keys):
 *
 * ```
 * change   flags (1: bit 0 deleted) · time (8, BE µs) · rev length (1) · rev (ASCII) · id (UTF-8)
 * id       seq (8, BE) · deleted (1: 0 or 1; absent in entries written before counts were kept)
 * count    live documents (8, BE, signed) · deleted documents (8, BE, signed): a summary or a delta
 * marker   time (8, BE ms)
 * clock    (empty)
 * ```
 */
import { InvalidArgumentError } from '../errors';

/** A change entry's value: a document's winning leaf after its newest change. */
export interface ChangeRecord {
  id: string;
  rev: string;
  deleted: boolean;
  /** When the change committed, in µs (change-clock.ts): the order feeds of different partitions merge in. */
  time: number;
}

/** Encodes a change entry's value. */
export function encodeChange(c: ChangeRecord): Buffer {
  const out = Buffer.allocUnsafe(10 + c.rev.length + Buffer.byteLength(c.id, 'utf8'));
  out[0] = c.deleted ? 1 : 0;
  out.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(c.time))), 1);
  out[9] = c.rev.length;
  out.write(c.rev, 10, 'latin1');
  out.write(c.id, 10 + c.rev.length, 'utf8');
  return out;
}

/** Decodes a change entry's value. @throws InvalidArgumentError when the bytes are not one. */
export function decodeChange(bytes: Uint8Array): ChangeRecord {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 10 || b[0] > 1 || 10 + b[9] > b.length) throw new InvalidArgumentError(`not a changes feed entry (${b.length} bytes)`);
  const revEnd = 10 + b[9];
  return { deleted: b[0] === 1, time: Number(b.readBigUInt64BE(1)), rev: b.toString('latin1', 10, revEnd), id: b.toString('utf8', revEnd) };
}

/** An 8-byte big-endian unsigned number (a seq or a time). */
export function encodeUint64(n: bigint): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeBigUInt64BE(n);
  return out;
}

/** Reads an 8-byte big-endian unsigned number. @throws InvalidArgumentError for another length. */
export function decodeUint64(bytes: Uint8Array): bigint {
  if (bytes.length !== 8) throw new InvalidArgumentError(`expected 8 bytes, got ${bytes.length}`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).readBigUInt64BE(0);
}
