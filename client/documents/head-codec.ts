/**
 * The value of a document's head entry: its winning leaf's name, its number of leaves and, while the
 * winner is live and fits, the winner's body — written by every edit in the same atomic update as the
 * leaves. An edit reads the head and the leaf it extends with one point read (no iteration), and
 * knows the winner after it from the head alone — but for a deletion of the winner of several
 * leaves, which reads the runner-up. A read of the winner is one point read of the head.
 *
 * ```
 * format 1  1 · winner deleted (1) · leaf count (4, BE) · winner pos (4, BE) · winner hash (ASCII)
 * format 2  2 · winner deleted (1) · leaf count (4, BE) · winner pos (4, BE) · hash length (1) · winner hash · winner body (UTF-8 canonical JSON)
 * ```
 *
 * Format 1 (no body) is written when the winner is deleted or its body would not fit in one value
 * beside the rest; a reader of such a head reads the winning leaf instead.
 */
import { InvalidArgumentError } from '../errors';
import { MAX_VALUE_LENGTH } from '../limits';
import type { LeafName } from './key-layout';

const NAME_ONLY = 1;
const WITH_BODY = 2;

/** A document's head, decoded. */
export interface HeadValue {
  winner: LeafName;
  leafCount: number;
  /** The winner's body (canonical JSON) when the head keeps it: null for a deleted winner or a body too large to repeat here. */
  body: string | null;
}

/** Encodes a head value; a body that would take it over one value is left out. */
export function encodeHead(h: HeadValue): Buffer {
  const { winner } = h;
  const bodyBytes = h.body === null || winner.deleted ? -1 : Buffer.byteLength(h.body, 'utf8');
  const withBody = bodyBytes >= 0 && 11 + winner.hash.length + bodyBytes <= MAX_VALUE_LENGTH;
  const out = Buffer.allocUnsafe(withBody ? 11 + winner.hash.length + bodyBytes : 10 + winner.hash.length);
  out[0] = withBody ? WITH_BODY : NAME_ONLY;
  out[1] = winner.deleted ? 1 : 0;
  out.writeUInt32BE(h.leafCount, 2);
  out.writeUInt32BE(winner.pos, 6);
  if (!withBody) {
    out.write(winner.hash, 10, 'latin1');
    return out;
  }
  out[10] = winner.hash.length;
  out.write(winner.hash, 11, 'latin1');
  out.write(h.body!, 11 + winner.hash.length, 'utf8');
  return out;
}

/** Decodes a head value. @throws InvalidArgumentError when the bytes are not one. */
export function decodeHead(bytes: Uint8Array): HeadValue {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 11 || (b[0] !== NAME_ONLY && b[0] !== WITH_BODY) || b[1] > 1) throw new InvalidArgumentError(`not a document head (${b.length} bytes)`);
  const base = { deleted: b[1] === 1, pos: b.readUInt32BE(6) };
  const leafCount = b.readUInt32BE(2);
  if (b[0] === NAME_ONLY) return { winner: { ...base, hash: b.toString('latin1', 10) }, leafCount, body: null };
  const hashEnd = 11 + b[10];
  if (b[10] === 0 || hashEnd > b.length) throw new InvalidArgumentError(`not a document head (${b.length} bytes, hash of ${b[10]})`);
  return { winner: { ...base, hash: b.toString('latin1', 11, hashEnd) }, leafCount, body: b.toString('utf8', hashEnd) };
}
