/**
 * Validation of the segment engine's read requests (Get keys, Iterate, Scan), done before any read:
 * failures are INVALID_ARGUMENT faults naming the field and the limit, as in validation.ts, whose key
 * checks they share.
 */
import { isUtf8 } from 'node:buffer';
import { DEFAULT_ITERATOR_PAGE_ITEMS, MAX_GET_KEYS, MAX_ITERATOR_PAGE_ITEMS, MAX_KEY_FAMILY_LENGTH, MAX_KEY_LENGTH } from '../../../proto/limits';
import { invalidArgument } from '../../../server-kit/fault';
import { splitDataKeySuffix } from '../key-codec';
import { inBounds } from '../key-range';
import { asBuffer, checkKey } from '../validation';

/** Validates the keys of a Get; returns (family, key) pairs. */
export function checkGetKeys(keys: unknown): { family: string; key: Buffer }[] {
  if (keys === undefined || keys === null) return [];
  if (!Array.isArray(keys)) throw invalidArgument('keys must be a list');
  if (keys.length > MAX_GET_KEYS) throw invalidArgument(`keys has ${keys.length} items; the maximum is ${MAX_GET_KEYS}`);
  return keys.map((ref: { family?: string; key?: Uint8Array } | null, i) => {
    if (!ref || typeof ref !== 'object') throw invalidArgument(`keys[${i}] is not a key reference`, i);
    const key = asBuffer(ref.key);
    return { family: checkKey(ref.family, key.length, 'keys', i), key };
  });
}

/** An Iterate request after validation. */
export interface CheckedIterate {
  family: string;
  includeValues: boolean;
  maxItems: number;
  prefix: Buffer;
  from: Buffer;
  to: Buffer;
  toInclusive: boolean;
  reverse: boolean;
  after: Buffer | undefined;
}

/** Iterate request fields as callers may send them. */
export interface IterateInput {
  segmentId?: string;
  family?: string;
  includeValues?: boolean;
  maxItems?: number;
  prefix?: Uint8Array;
  from?: Uint8Array;
  to?: Uint8Array;
  toInclusive?: boolean;
  reverse?: boolean;
  hasAfter?: boolean;
  after?: Uint8Array;
}

const RESUME_POSITION = 'a resume position is the last key of a page of the same iteration';

/** Validates an Iterate request; a resume position must be a key the iteration's range holds. */
export function checkIterate(req: IterateInput): CheckedIterate {
  const family = checkKey(req.family, 0, '', -1, true);
  const checked: CheckedIterate = {
    family,
    includeValues: req.includeValues === true,
    maxItems: checkMaxItems(req.maxItems),
    prefix: asBuffer(req.prefix),
    from: asBuffer(req.from),
    to: asBuffer(req.to),
    toInclusive: req.toInclusive === true,
    reverse: req.reverse === true,
    after: undefined,
  };
  if (req.hasAfter !== true) return checked;
  const after = asBuffer(req.after);
  if (after.length === 0) throw invalidArgument(`after is empty; ${RESUME_POSITION}`);
  const keyBytes = Buffer.byteLength(family) + after.length;
  if (keyBytes > MAX_KEY_LENGTH) throw invalidArgument(`family + after is ${keyBytes} bytes; the maximum is ${MAX_KEY_LENGTH}`);
  // Checked against the range alone (the position itself is not yet a bound).
  if (!inBounds(after, checked)) throw invalidArgument(`after lies outside the iterated range (prefix, from, to); ${RESUME_POSITION}`);
  checked.after = after;
  return checked;
}

/** A page size: 0 (or absent) means the default; above MAX_ITERATOR_PAGE_ITEMS is refused. */
function checkMaxItems(raw: unknown = 0): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0) {
    throw invalidArgument(`maxItems ${JSON.stringify(raw)} is not a non-negative integer`);
  }
  if (raw > MAX_ITERATOR_PAGE_ITEMS) throw invalidArgument(`maxItems is ${raw}; the maximum is ${MAX_ITERATOR_PAGE_ITEMS}`);
  return raw === 0 ? DEFAULT_ITERATOR_PAGE_ITEMS : raw;
}

/** A Scan request as it may arrive. */
export interface ScanInput {
  segmentId?: string;
  includeValues?: boolean;
  maxItems?: number;
  after?: Uint8Array | null;
}

/**
 * Validates a Scan request: page size as for Iterate; `after`, the position of the previous page, is
 * opaque to callers but must be laid out as the store lays positions out (see readScanPage): the data
 * key of an item, within the limits of a key, read within the segment scanned.
 */
export function checkScan(req: ScanInput): { maxItems: number; includeValues: boolean; after: Buffer } {
  const after = asBuffer(req.after);
  const problem = after.length > 0 ? scanPositionProblem(after) : undefined;
  if (problem) throw invalidArgument(`after is not a Scan position (${problem}); pass back the position of the previous page, or an empty one to start`);
  return { maxItems: checkMaxItems(req.maxItems), includeValues: req.includeValues === true, after };
}

/** Why `position` is not one a Scan page could have ended at; undefined when it is. */
function scanPositionProblem(position: Buffer): string | undefined {
  const parts = splitDataKeySuffix(position);
  if (typeof parts === 'string') return parts;
  const { family, key } = parts;
  if (family) {
    if (family.length === 0) return 'its family is empty';
    if (family.length > MAX_KEY_FAMILY_LENGTH) return `its family is ${family.length} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`;
    // Families are stored as the UTF-8 of a string.
    if (!isUtf8(family)) return 'its family is not UTF-8';
  }
  if (key.length === 0) return 'its key is empty';
  const keyBytes = (family?.length ?? 0) + key.length;
  if (keyBytes > MAX_KEY_LENGTH) return `its family + key is ${keyBytes} bytes; the maximum is ${MAX_KEY_LENGTH}`;
  return undefined;
}
