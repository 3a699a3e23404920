/**
 * The key bounds of an iterator page and of a range removal (IterateRequest's and Modification's
 * prefix, from, to, toInclusive and resume point), and which keys they admit: one meaning, shared by
 * the segment store's storage and the client's in-memory table.
 */

/** User-key bounds; empty buffers are open bounds (an iterator's options, a range removal's). */
export interface KeyBounds {
  prefix: Buffer;
  from: Buffer;
  to: Buffer;
  toInclusive: boolean;
  /** Resume point: strictly after it (forward) or strictly before it (reverse). */
  after?: Buffer;
  reverse: boolean;
}

/** The smallest key above every key starting with `prefix`; undefined when there is none (all 0xff). */
export function prefixSuccessor(prefix: Uint8Array): Buffer | undefined {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) return undefined;
  const out = Buffer.from(prefix.subarray(0, end));
  out[end - 1]++;
  return out;
}

/** True when `key` lies within `b` (prefix, from, to and resume point). */
export function inBounds(key: Buffer, b: KeyBounds): boolean {
  if (b.prefix.length > 0 && (key.length < b.prefix.length || b.prefix.compare(key, 0, b.prefix.length) !== 0)) return false;
  if (b.from.length > 0 && Buffer.compare(key, b.from) < 0) return false;
  if (b.to.length > 0) {
    const c = Buffer.compare(key, b.to);
    if (c > 0 || (c === 0 && !b.toInclusive)) return false;
  }
  if (b.after) {
    const c = Buffer.compare(key, b.after);
    if (b.reverse ? c >= 0 : c <= 0) return false;
  }
  return true;
}
