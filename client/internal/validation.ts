/**
 * Client-side checks of the data model's limits (DESIGN §2), run before anything is sent so that bad
 * input fails fast with a message naming the field and the limit ("key family is 3000 bytes; the
 * maximum is 2048"). The segment store checks the same limits again.
 */
import {
  MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_ITERATOR_PAGE_ITEMS, MAX_KEY_FAMILY_LENGTH, MAX_KEY_LENGTH, MAX_VALUE_LENGTH,
} from '../../proto/limits';
import { InvalidArgumentError } from '../errors';
import { Version } from '../version';

/** Checks a key family (null = none) and returns its UTF-8 length. */
export function checkFamily(family: string | null, required = false, operation = ''): number {
  if (family === null || family === undefined) {
    if (required) throw new InvalidArgumentError(`${operation} needs a key family: only keys of one family are updated atomically or iterated in order`);
    return 0;
  }
  if (typeof family !== 'string') throw new InvalidArgumentError(`key family must be a string or null, got ${typeof family}`);
  if (family.length === 0) throw new InvalidArgumentError('key family must be null or a non-empty string');
  const length = Buffer.byteLength(family, 'utf8');
  if (length > MAX_KEY_FAMILY_LENGTH) throw new InvalidArgumentError(`key family is ${length} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`);
  return length;
}

/** Checks a serialized key against the key-length limit (which counts the family too). */
export function checkKey(key: Uint8Array, familyLength: number, index = -1): void {
  if (key.length === 0) throw new InvalidArgumentError('key is empty; the minimum is 1 byte', at(index));
  const total = key.length + familyLength;
  if (total > MAX_KEY_LENGTH) {
    const what = familyLength > 0 ? 'key with its family' : 'key';
    throw new InvalidArgumentError(`${what} is ${total} bytes; the maximum is ${MAX_KEY_LENGTH}`, at(index));
  }
}

/** Checks a serialized value against the value-length limit. */
export function checkValue(value: Uint8Array, index = -1): void {
  if (value.length > MAX_VALUE_LENGTH) throw new InvalidArgumentError(`value is ${value.length} bytes; the maximum is ${MAX_VALUE_LENGTH}`, at(index));
}

/** Checks the item count of a batch. */
export function checkBatchCount(count: number): void {
  if (count > MAX_BATCH_ITEMS) throw new InvalidArgumentError(`batch has ${count} items; the maximum is ${MAX_BATCH_ITEMS}`);
}

/** Checks the total key + value bytes of a batch. */
export function checkBatchBytes(bytes: number): void {
  if (bytes > MAX_BATCH_BYTES) throw new InvalidArgumentError(`batch is ${bytes} bytes; the maximum is ${MAX_BATCH_BYTES}`);
}

/** Checks that a condition is a {@link Version} (or absent). */
export function checkVersion(version: unknown, index = -1): Version | undefined {
  if (version === undefined || version === null) return undefined;
  if (!(version instanceof Version)) {
    throw new InvalidArgumentError(`version must be a Version (use Version.fromString for strings), got ${typeof version}`, at(index));
  }
  return version;
}

/** Checks an optional `{ ttlMs }` and returns it as the wire string ("0" = never expires). */
export function checkTtl(ttlMs: number | undefined, index = -1): string {
  if (ttlMs === undefined || ttlMs === null) return '0';
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs)) throw new InvalidArgumentError(`ttlMs must be an integer number of milliseconds, got ${String(ttlMs)}`, at(index));
  if (ttlMs < 1) throw new InvalidArgumentError(`ttlMs is ${ttlMs}; the minimum is 1`, at(index));
  return String(ttlMs);
}

/** Checks an iterator page size. */
export function checkPageSize(maxKeysAtOnce: number): void {
  if (typeof maxKeysAtOnce !== 'number' || !Number.isInteger(maxKeysAtOnce)) {
    throw new InvalidArgumentError(`maxKeysAtOnce must be an integer, got ${String(maxKeysAtOnce)}`);
  }
  if (maxKeysAtOnce < 1) throw new InvalidArgumentError(`maxKeysAtOnce is ${maxKeysAtOnce}; the minimum is 1`);
  if (maxKeysAtOnce > MAX_ITERATOR_PAGE_ITEMS) throw new InvalidArgumentError(`maxKeysAtOnce is ${maxKeysAtOnce}; the maximum is ${MAX_ITERATOR_PAGE_ITEMS}`);
}

/** Tracks the serialized keys of a batch and rejects the second occurrence of one. */
export class DuplicateKeyCheck {
  private readonly seen = new Set<string>();

  add(key: Uint8Array, index: number, describe: () => string): void {
    const id = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
    if (this.seen.has(id)) throw new InvalidArgumentError(`key ${describe()} appears more than once in the batch (index ${index})`, at(index));
    this.seen.add(id);
  }
}

function at(index: number): { index?: number } {
  return index >= 0 ? { index } : {};
}
