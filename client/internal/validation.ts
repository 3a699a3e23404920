/**
 * Client-side checks of the data model's limits (DESIGN §2), run before anything is sent so that bad
 * input fails fast with a message naming the field and the limit ("key family is 3000 bytes; the
 * maximum is 2048"). The segment store checks the same limits again.
 */
import {
  MAX_BATCH_BYTES,
  MAX_BATCH_ITEMS,
  MAX_ITERATOR_PAGE_ITEMS,
  MAX_KEY_FAMILY_LENGTH,
  MAX_KEY_LENGTH,
  MAX_PARTITION_COUNT,
  MAX_STORE_ID_LENGTH,
  MAX_VALUE_LENGTH,
  MIN_PARTITION_COUNT,
} from '../../proto/limits';
import { InvalidArgumentError } from '../errors';
import { Version } from '../version';
import { describeKey } from './status-to-error';
import { NO_TTL } from './update-encoder';

/** A value as it appears in a message: strings quoted, everything else as `String` shows it. */
function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** Throws InvalidArgumentError "`field` is `value`; it must be `rule`". */
export function refuse(field: string, value: unknown, rule: string): never {
  throw new InvalidArgumentError(`${field} is ${shown(value)}; it must be ${rule}`);
}

/** What `value` is, for messages: its type, or null. */
export function kindOf(value: unknown): string {
  return value === null ? 'null' : typeof value;
}

/**
 * `items` as an array (arrays as they are).
 * @throws InvalidArgumentError naming `operation` when `items` is not an iterable (a string, which
 * iterates its characters, neither).
 */
export function listOf<T>(items: Iterable<T>, operation: string, what: string): T[] {
  if (Array.isArray(items)) return items;
  if (items === null || typeof items !== 'object' || typeof (items as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function') {
    throw new InvalidArgumentError(`${operation} takes an iterable of ${what}, got ${kindOf(items)}`);
  }
  return [...items];
}

/** Checks an optional boolean option (undefined = its default). */
export function checkBoolean(field: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') refuse(field, value, 'true or false');
}

/** Checks partitionCount: an integer in 1–1024. */
export function checkPartitionCount(config: unknown): number {
  const count = (config as { partitionCount?: unknown } | undefined)?.partitionCount;
  if (typeof count !== 'number' || !Number.isInteger(count)) {
    throw new InvalidArgumentError(`partitionCount must be an integer, got ${String(count)}`);
  }
  if (count < MIN_PARTITION_COUNT) throw new InvalidArgumentError(`partitionCount is ${count}; the minimum is ${MIN_PARTITION_COUNT}`);
  if (count > MAX_PARTITION_COUNT) throw new InvalidArgumentError(`partitionCount is ${count}; the maximum is ${MAX_PARTITION_COUNT}`);
  return count;
}

/** Checks a segment store id (1–250 characters) and returns it. */
export function checkStoreId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) refuse('store id', id, `1 to ${MAX_STORE_ID_LENGTH} characters`);
  if (id.length > MAX_STORE_ID_LENGTH) throw new InvalidArgumentError(`store id is ${id.length} characters; the maximum is ${MAX_STORE_ID_LENGTH}`);
  return id;
}

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

/** Checks an optional `{ ttlMs }` and returns it as the wire string ({@link NO_TTL} = never expires). */
export function checkTtl(ttlMs: number | undefined, index = -1): string {
  if (ttlMs === undefined || ttlMs === null) return NO_TTL;
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

/**
 * Tracks the serialized keys of a batch and rejects the second occurrence of one. Keys are found by
 * a hash of their bytes in an open-addressing table of indexes, and compared byte by byte only when
 * hashes meet: no string or Buffer per key (turning each key into a string was a top cost of putAll).
 */
export class DuplicateKeyCheck {
  private readonly keys: Uint8Array[] = [];
  /** Per slot: 1 + the index in `keys` of the key held there, or 0 when free. */
  private slots: Int32Array;

  /** @param capacity the expected number of keys (the table grows past it). */
  constructor(capacity = 8) {
    this.slots = new Int32Array(tableSize(capacity));
  }

  /** Adds the serialized `key` of the caller's key `original` at batch `index`; throws on a repeat. */
  add(key: Uint8Array, index: number, original: unknown): void {
    const slot = this.find(key);
    if (this.slots[slot] !== 0) throw new InvalidArgumentError(`key ${describeKey(original)} appears more than once in the batch (index ${index})`, at(index));
    this.keys.push(key);
    this.slots[slot] = this.keys.length;
    if (this.keys.length * 2 > this.slots.length) this.grow();
  }

  /** The slot holding `key`, or the free slot where it belongs. */
  private find(key: Uint8Array): number {
    const mask = this.slots.length - 1;
    for (let slot = hashBytes(key) & mask; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot];
      if (held === 0 || sameBytes(this.keys[held - 1], key)) return slot;
    }
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let i = 0; i < this.keys.length; i++) this.slots[this.find(this.keys[i])] = i + 1;
  }
}

function tableSize(capacity: number): number {
  let size = 16;
  while (size < capacity * 2) size *= 2;
  return size;
}

/** FNV-1a over the bytes (and the length). */
function hashBytes(b: Uint8Array): number {
  let h = 0x811c9dc5 ^ b.length;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return h >>> 0;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function at(index: number): { index?: number } {
  return index >= 0 ? { index } : {};
}
