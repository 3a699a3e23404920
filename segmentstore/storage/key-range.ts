/**
 * Turns user-key bounds of one family (prefix, from, to, resume point) into LevelDB iterator bounds
 * over storage keys, which all start with the family's storage prefix.
 */
import type { KeyBounds } from '../../proto/key-bounds';
import { compareBytes, prefixSuccessor } from './key-codec';

export { inBounds } from '../../proto/key-bounds';
export type { KeyBounds } from '../../proto/key-bounds';

/** LevelDB range options (storage keys). */
export interface StorageRange {
  gt?: Buffer;
  gte?: Buffer;
  lt?: Buffer;
  lte?: Buffer;
}

interface Bound {
  key: Buffer;
  inclusive: boolean;
}

function tighterLower(a: Bound | undefined, b: Bound): Bound {
  if (!a) return b;
  const c = compareBytes(a.key, b.key);
  if (c !== 0) return c > 0 ? a : b;
  return a.inclusive ? b : a;
}

function tighterUpper(a: Bound | undefined, b: Bound): Bound {
  if (!a) return b;
  const c = compareBytes(a.key, b.key);
  if (c !== 0) return c < 0 ? a : b;
  return a.inclusive ? b : a;
}

/** The lower and upper user-key bounds implied by `b`; undefined = open. */
export function userBounds(b: KeyBounds): { lower?: Bound; upper?: Bound } {
  let lower: Bound | undefined;
  let upper: Bound | undefined;
  if (b.prefix.length > 0) {
    lower = { key: b.prefix, inclusive: true };
    const end = prefixSuccessor(b.prefix);
    if (end) upper = { key: end, inclusive: false };
  }
  if (b.from.length > 0) lower = tighterLower(lower, { key: b.from, inclusive: true });
  if (b.to.length > 0) upper = tighterUpper(upper, { key: b.to, inclusive: b.toInclusive });
  if (b.after) {
    if (b.reverse) upper = tighterUpper(upper, { key: b.after, inclusive: false });
    else lower = tighterLower(lower, { key: b.after, inclusive: false });
  }
  return { lower, upper };
}

/** True when the bounds admit no key at all (LevelDB would reject or misread an inverted range). */
function emptyRange(lower: Bound | undefined, upper: Bound | undefined): boolean {
  if (!lower || !upper) return false;
  const c = compareBytes(lower.key, upper.key);
  return c > 0 || (c === 0 && !(lower.inclusive && upper.inclusive));
}

/** Storage-key range of `b` within the family whose storage prefix is `familyPrefix`; undefined when empty. */
export function storageRange(familyPrefix: Buffer, b: KeyBounds): StorageRange | undefined {
  const { lower, upper } = userBounds(b);
  if (emptyRange(lower, upper)) return undefined;
  const range: StorageRange = {};
  if (lower) range[lower.inclusive ? 'gte' : 'gt'] = Buffer.concat([familyPrefix, lower.key]);
  else range.gte = familyPrefix;
  if (upper) range[upper.inclusive ? 'lte' : 'lt'] = Buffer.concat([familyPrefix, upper.key]);
  else range.lt = prefixSuccessor(familyPrefix);
  return range;
}
