/**
 * The value of a document's head entry: its winning leaf's name and its number of leaves, written by
 * every edit in the same atomic update as the leaves. An edit reads the head and the leaf it extends
 * with one point read (no iteration), and knows the winner after it from the head alone — but for a
 * deletion of the winner of several leaves, which reads the runner-up.
 *
 * ```
 * format (1) = 1 · winner deleted (1) · leaf count (4, BE) · winner pos (4, BE) · winner hash (ASCII)
 * ```
 */
import { InvalidArgumentError } from '../errors';
import type { LeafName } from './key-layout';

const FORMAT = 1;

/** A document's head, decoded. */
export interface HeadValue {
  winner: LeafName;
  leafCount: number;
}

/** Encodes a head value. */
export function encodeHead(h: HeadValue): Buffer {
  const out = Buffer.allocUnsafe(10 + h.winner.hash.length);
  out[0] = FORMAT;
  out[1] = h.winner.deleted ? 1 : 0;
  out.writeUInt32BE(h.leafCount, 2);
  out.writeUInt32BE(h.winner.pos, 6);
  out.write(h.winner.hash, 10, 'latin1');
  return out;
}

/** Decodes a head value. @throws InvalidArgumentError when the bytes are not one. */
export function decodeHead(bytes: Uint8Array): HeadValue {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 11 || b[0] !== FORMAT || b[1] > 1) throw new InvalidArgumentError(`not a document head (${b.length} bytes)`);
  return { winner: { deleted: b[1] === 1, pos: b.readUInt32BE(6), hash: b.toString('latin1', 10) }, leafCount: b.readUInt32BE(2) };
}
