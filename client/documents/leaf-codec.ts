/**
 * The value of a leaf entry: the hashes of the leaf's ancestors, newest first (up to revsLimit − 1 of
 * them: the path the leaf keeps), then the leaf's body in canonical JSON.
 *
 * ```
 * format (1) = 1 · ancestor count (2, BE) · for each: length (1) · hash (ASCII) · body (UTF-8 JSON)
 * ```
 */
import { InvalidArgumentError } from '../errors';

const FORMAT = 1;

/** A leaf's value, decoded. */
export interface LeafValue {
  /** Ancestor hashes, newest (the parent) first. */
  ancestors: string[];
  /** The body in canonical JSON. */
  body: string;
}

/** Bytes of a leaf value with these ancestors and body. */
export function leafValueLength(ancestors: readonly string[], body: string): number {
  let n = 3 + Buffer.byteLength(body, 'utf8');
  for (const a of ancestors) n += 1 + a.length;
  return n;
}

/** Encodes a leaf value. */
export function encodeLeafValue(ancestors: readonly string[], body: string): Buffer {
  const out = Buffer.allocUnsafe(leafValueLength(ancestors, body));
  out[0] = FORMAT;
  out.writeUInt16BE(ancestors.length, 1);
  let at = 3;
  for (const a of ancestors) {
    out[at++] = a.length;
    at += out.write(a, at, 'latin1');
  }
  out.write(body, at, 'utf8');
  return out;
}

/** Decodes a leaf value. @throws InvalidArgumentError when the bytes are not one. */
export function decodeLeafValue(bytes: Uint8Array): LeafValue {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 3 || b[0] !== FORMAT) throw new InvalidArgumentError(`not a document leaf value (format ${b[0]}, ${b.length} bytes)`);
  const count = b.readUInt16BE(1);
  const ancestors = new Array<string>(count);
  let at = 3;
  for (let i = 0; i < count; i++) {
    const n = b[at++];
    if (n === undefined || at + n > b.length) throw new InvalidArgumentError('a document leaf value ends inside its ancestors');
    ancestors[i] = b.toString('latin1', at, at + n);
    at += n;
  }
  return { ancestors, body: b.toString('utf8', at) };
}
