/**
 * What every {@link KeyValueTable} implementation shares: each public method checks its input (the
 * limits of DESIGN §2, in one order, with one wording), serializes keys and values, and manages the
 * open/closed state; then it calls a storage hook (as abstract-level's methods call `_put`, `_get`).
 * The gRPC table and the in-memory table differ only in their hooks, so they refuse the same input
 * with the same errors.
 *
 * A batch is serialized into a {@link ModificationSink} the implementation provides: the gRPC table's
 * is the wire encoder itself (nothing is encoded twice on the hot path), the in-memory table's a list.
 */
import { InvalidArgumentError, ObjectClosedError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import { DEFAULT_ITERATOR_PAGE_ITEMS } from '../limits';
import type { Serializer } from '../serializers';
import type { IteratorItem, IteratorOptions, ScannedEntry, ScanOptions, TableEntry, TableEntryUpdate, TableKey, TableModification, TtlOptions } from '../types';
import type { Version } from '../version';
import { decodeState, IteratorState } from './iterator-state';
import { MODIFICATION_TYPES } from '../../proto/enums';
import { NO_TTL } from './update-encoder';
import { checkBatchBytes, checkBatchCount, checkBoolean, checkFamily, checkKey, checkPageSize, checkTtl, checkValue, checkVersion, DuplicateKeyCheck, kindOf, listOf } from './validation';

const EMPTY = Buffer.alloc(0);
/** The first of a batch's versions: a single modification's. */
const first = (versions: (Version | null)[]): Version | null => versions[0];

/** Where a batch's checked, serialized modifications go (`UpdateEncoder` is one). */
export interface ModificationSink {
  /** Adds a PUT, INSERT or REMOVE (see MODIFICATION_TYPES); `ttlMs` as checkTtl returns it (NO_TTL = never expires). */
  add(type: number, key: Uint8Array, value: Uint8Array, condition: Version | undefined, ttlMs: string): void;
  /** Adds a REMOVE_RANGE; empty bounds are open. */
  addRange(from: Uint8Array, to: Uint8Array, prefix: Uint8Array): void;
  /** Key + value bytes added so far (what the batch limits count). */
  readonly dataBytes: number;
}

/** A getAll under way: its keys, serialized, and where their entries go (the hook fills `out`). */
export interface KeysRead<K, V> {
  family: string | null;
  familyLength: number;
  list: K[];
  bytes: Uint8Array[];
  out: (TableEntry<K, V> | null)[];
}

/**
 * A table whose public methods (documented on {@link KeyValueTable}) validate, then call the storage
 * hooks of a subclass.
 */
export abstract class AbstractKeyValueTable<K, V, S extends ModificationSink> implements KeyValueTable<K, V> {
  private closed = false;

  constructor(
    readonly name: string,
    protected readonly keySerializer: Serializer<K>,
    protected readonly valueSerializer: Serializer<V>,
  ) {}

  /** A sink for a batch of `capacity` modifications of `family` ("" for none). */
  protected abstract newBatch(family: string, capacity: number): S;

  /**
   * Applies a batch atomically; resolves one version per modification (null for removals).
   * `routeKey` is the serialized key of a single family-less modification, else empty (the family
   * routes); `keys` are the caller's keys by index (undefined for range removals), to name in errors.
   */
  protected abstract writeBatch(family: string | null, routeKey: Uint8Array, batch: S, keys: readonly unknown[]): Promise<(Version | null)[]>;

  /** Reads the entries of every key of `read` into `read.out` (null when absent). */
  protected abstract readEntries(read: KeysRead<K, V>): Promise<void>;

  /** Reads the entry of the one key of `read` (a `get`); a subclass may take a shorter way than readEntries. */
  protected readEntry(read: KeysRead<K, V>): Promise<TableEntry<K, V> | null> {
    return this.readEntries(read).then(() => read.out[0]);
  }

  /** The pages of an iteration from `state` on (its own copy: it may change it). */
  protected abstract keyPages(state: IteratorState): AsyncIterable<IteratorItem<TableKey<K>>>;

  /** The pages of an entry iteration from `state` on (its own copy: it may change it). */
  protected abstract entryPages(state: IteratorState): AsyncIterable<IteratorItem<TableEntry<K, V>>>;

  /** The pages of a scan of every partition, at most `maxItems` items each. */
  protected abstract scanPages(maxItems: number): AsyncGenerator<IteratorItem<ScannedEntry<K, V>>>;

  /** Releases what the table holds, once, on the first close(). */
  protected abstract release(): void;

  put(family: string | null, key: K, value: V, options?: TtlOptions): Promise<Version> {
    return this.single(family, 'PUT', key, value, undefined, options?.ttlMs) as Promise<Version>;
  }

  putIfAbsent(family: string | null, key: K, value: V, options?: TtlOptions): Promise<Version> {
    return this.single(family, 'INSERT', key, value, undefined, options?.ttlMs) as Promise<Version>;
  }

  replace(family: string | null, key: K, value: V, version: Version, options?: TtlOptions): Promise<Version> {
    if (version === undefined || version === null) return Promise.reject(new InvalidArgumentError('replace needs a version (Version.NO_VERSION for none)'));
    return this.single(family, 'PUT', key, value, version, options?.ttlMs) as Promise<Version>;
  }

  async remove(family: string | null, key: K, version?: Version): Promise<void> {
    await this.single(family, 'REMOVE', key, undefined, version);
  }

  async putAll(family: string, entries: Iterable<readonly [K, V]>, options?: TtlOptions): Promise<Version[]> {
    const list = listOf(entries, 'putAll', '[key, value] pairs');
    const ttlMs = options?.ttlMs;
    const mods = new Array<TableModification<K, V>>(list.length);
    for (let i = 0; i < list.length; i++) {
      const e = list[i];
      if (!Array.isArray(e)) throw new InvalidArgumentError(`putAll entry ${i} must be a [key, value] pair, got ${kindOf(e)}`, { index: i });
      mods[i] = { type: 'put', key: e[0], value: e[1], ttlMs };
    }
    return (await this.updateAs('putAll', family, mods)) as Version[];
  }

  async replaceAll(family: string, entries: Iterable<TableEntryUpdate<K, V>>): Promise<Version[]> {
    const mods = listOf(entries, 'replaceAll', 'entries').map((e, i): TableModification<K, V> => {
      if (e === null || typeof e !== 'object') throw new InvalidArgumentError(`replaceAll entry ${i} must be an object { key, value, version? }, got ${kindOf(e)}`, { index: i });
      return { type: 'put', key: e.key, value: e.value, version: e.version };
    });
    return (await this.updateAs('replaceAll', family, mods)) as Version[];
  }

  async removeAll(family: string, keys: Iterable<TableKey<K>>): Promise<void> {
    const mods = listOf(keys, 'removeAll', 'keys').map((k, i): TableModification<K, V> => {
      if (k === null || typeof k !== 'object') throw new InvalidArgumentError(`removeAll entry ${i} must be an object { key, version? }, got ${kindOf(k)}`, { index: i });
      return { type: 'remove', key: k.key, version: k.version };
    });
    await this.updateAs('removeAll', family, mods);
  }

  update(family: string, modifications: Iterable<TableModification<K, V>>): Promise<(Version | null)[]> {
    return this.updateAs('update', family, modifications);
  }

  get(family: string | null, key: K): Promise<TableEntry<K, V> | null> {
    let familyLength: number;
    let bytes: Uint8Array;
    try {
      this.checkOpen();
      familyLength = checkFamily(family);
      bytes = this.serializeKey(key, familyLength, 0);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.readEntry({ family, familyLength, list: [key], bytes: [bytes], out: [null] });
  }

  async exists(family: string | null, key: K): Promise<boolean> {
    return (await this.get(family, key)) !== null;
  }

  async getAll(family: string | null, keys: Iterable<K>): Promise<(TableEntry<K, V> | null)[]> {
    this.checkOpen();
    const familyLength = checkFamily(family);
    const list = listOf(keys, 'getAll', 'keys');
    if (list.length === 0) return [];
    const bytes = list.map((k, i) => this.serializeKey(k, familyLength, i));
    const out: (TableEntry<K, V> | null)[] = new Array(list.length).fill(null);
    await this.readEntries({ family, familyLength, list, bytes, out });
    return out;
  }

  keyIterator(family: string, options: IteratorOptions<K> = {}): AsyncIterable<IteratorItem<TableKey<K>>> {
    const start = this.startOf(family, options, false);
    return this.checkedPages((state) => this.keyPages(state), start);
  }

  entryIterator(family: string, options: IteratorOptions<K> = {}): AsyncIterable<IteratorItem<TableEntry<K, V>>> {
    const start = this.startOf(family, options, true);
    return this.checkedPages((state) => this.entryPages(state), start);
  }

  async *scanEntries(options: ScanOptions = {}): AsyncGenerator<IteratorItem<ScannedEntry<K, V>>> {
    this.checkOpen();
    const maxItems = options?.maxKeysAtOnce ?? DEFAULT_ITERATOR_PAGE_ITEMS;
    checkPageSize(maxItems);
    for await (const page of this.scanPages(maxItems)) {
      this.checkOpen();
      yield page;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.release();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @throws ObjectClosedError once the table is closed. */
  protected checkOpen(): void {
    if (this.closed) throw new ObjectClosedError(`table ${this.name} is closed`, { table: this.name });
  }

  private async updateAs(operation: string, family: string, modifications: Iterable<TableModification<K, V>>): Promise<(Version | null)[]> {
    this.checkOpen();
    const familyLength = checkFamily(family, true, operation);
    const mods = listOf(modifications, operation, 'modifications');
    checkBatchCount(mods.length);
    if (mods.length === 0) return [];
    const batch = this.newBatch(family, mods.length);
    const keys = this.fill(batch, familyLength, mods);
    return this.writeBatch(family, EMPTY, batch, keys);
  }

  /** One modification of one key; validation errors reject (never throw), as from an async function. */
  private single(family: string | null, type: 'PUT' | 'INSERT' | 'REMOVE', key: K, value: V | undefined, version?: Version, ttlMs?: number): Promise<Version | null> {
    try {
      this.checkOpen();
      const familyLength = checkFamily(family);
      const condition = checkVersion(version);
      const keyBytes = this.serializeKey(key, familyLength);
      // Only a remove has no value: a put of `undefined` goes through the serializer like any value
      // (JSON refuses it; an empty value stored for it could never be read back).
      const valueBytes = type === 'REMOVE' ? EMPTY : this.serializeValue(value as V);
      const batch = this.newBatch(family ?? '', 1);
      batch.add(MODIFICATION_TYPES[type], keyBytes, valueBytes, condition, checkTtl(ttlMs));
      return this.writeBatch(family, family === null ? keyBytes : EMPTY, batch, [key]).then(first);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Validates and serializes a batch of one family into `batch` (nothing is written when anything is
   * wrong); returns the caller's keys by index.
   */
  private fill(batch: S, familyLength: number, mods: TableModification<K, V>[]): unknown[] {
    const duplicates = new DuplicateKeyCheck(mods.length);
    const keys: unknown[] = new Array(mods.length);
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      if (m?.type === 'removeRange') {
        batch.addRange(this.boundOf(m.from, familyLength), this.boundOf(m.to, familyLength), this.boundOf(m.prefix, familyLength));
        keys[i] = undefined;
        continue;
      }
      duplicates.add(this.addModification(batch, familyLength, m, i), i, m.key);
      keys[i] = m.key;
    }
    checkBatchBytes(batch.dataBytes);
    return keys;
  }

  /**
   * Validates and serializes one insert, put or remove (key, value, version, ttl, in this order), adds
   * it to `batch` and returns its serialized key.
   */
  private addModification(batch: S, familyLength: number, m: TableModification<K, V>, i: number): Uint8Array {
    switch (m?.type) {
      case 'insert': {
        const key = this.serializeKey(m.key, familyLength, i);
        batch.add(MODIFICATION_TYPES.INSERT, key, this.serializeValue(m.value, i), undefined, checkTtl(m.ttlMs, i));
        return key;
      }
      case 'put': {
        const key = this.serializeKey(m.key, familyLength, i);
        batch.add(MODIFICATION_TYPES.PUT, key, this.serializeValue(m.value, i), checkVersion(m.version, i), checkTtl(m.ttlMs, i));
        return key;
      }
      case 'remove': {
        const key = this.serializeKey(m.key, familyLength, i);
        batch.add(MODIFICATION_TYPES.REMOVE, key, EMPTY, checkVersion(m.version, i), NO_TTL);
        return key;
      }
      default:
        throw new InvalidArgumentError(`modification ${i} has type ${JSON.stringify((m as { type?: unknown })?.type)}; expected insert, put, remove or removeRange`, { index: i });
    }
  }

  /** The checked start of an iteration: a decoded `fromState`, or a fresh state from the options. */
  private startOf(family: string, given: IteratorOptions<K> | null, entries: boolean): IteratorState {
    this.checkOpen();
    checkFamily(family, true, entries ? 'entryIterator' : 'keyIterator');
    const options = given ?? {};
    checkBoolean('reverse', options.reverse);
    checkBoolean('toInclusive', options.toInclusive);
    if (options.fromState !== undefined) return decodeState(options.fromState, this.name, family, entries);
    const maxKeysAtOnce = options.maxKeysAtOnce ?? DEFAULT_ITERATOR_PAGE_ITEMS;
    checkPageSize(maxKeysAtOnce);
    const familyLength = family ? Buffer.byteLength(family) : 0;
    return {
      table: this.name,
      family,
      entries,
      maxKeysAtOnce,
      prefix: this.boundOf(options.prefix, familyLength),
      from: this.boundOf(options.from, familyLength),
      to: this.boundOf(options.to, familyLength),
      toInclusive: options.toInclusive === true,
      reverse: options.reverse === true,
      after: undefined,
      done: false,
    };
  }

  /**
   * An iterable of the pages from `start`; the table must still be open for each page. A plain
   * iterator over the pages' own rather than an async generator around them: a generator wrapping
   * another kept what a page read allocates alive across young collections (one-item pages of 10 KB
   * at 1,000 a second: a full collection every ~0.4 s instead of one in 15 s, p99 12–17 ms instead
   * of 4–8).
   */
  private checkedPages<T>(pages: (state: IteratorState) => AsyncIterable<T>, start: IteratorState): AsyncIterable<T> {
    const checkOpen = () => this.checkOpen();
    return {
      // Each iteration starts from the beginning with its own state: iterating the iterable again (or
      // twice at once) gives the same pages, as an AsyncIterable should.
      [Symbol.asyncIterator]: (): AsyncIterator<T> => {
        const inner = pages({ ...start })[Symbol.asyncIterator]();
        const finish = async (value?: unknown): Promise<IteratorResult<T>> => (inner.return ? inner.return(value) : { done: true, value: undefined });
        return {
          next: async () => {
            const step = await inner.next();
            if (step.done) return step;
            try {
              checkOpen();
            } catch (err) {
              await finish();
              throw err;
            }
            return step;
          },
          return: finish,
        };
      },
    };
  }

  private boundOf(bound: K | undefined, familyLength: number): Buffer {
    if (bound === undefined || bound === null) return EMPTY;
    const bytes = this.serialize(this.keySerializer, bound, 'key bound', -1);
    // An empty bound is simply open; only the length limit applies.
    if (bytes.length > 0) checkKey(bytes, familyLength);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private serializeKey(key: K, familyLength: number, index = -1): Uint8Array {
    const bytes = this.serialize(this.keySerializer, key, 'key', index);
    checkKey(bytes, familyLength, index);
    return bytes;
  }

  private serializeValue(value: V, index = -1): Uint8Array {
    const bytes = this.serialize(this.valueSerializer, value, 'value', index);
    checkValue(bytes, index);
    return bytes;
  }

  private serialize<T>(serializer: Serializer<T>, item: T, what: string, index: number): Uint8Array {
    let bytes: unknown;
    try {
      bytes = serializer.serialize(item);
    } catch (err) {
      throw new InvalidArgumentError(`${what} cannot be serialized: ${err instanceof Error ? err.message : String(err)}`, { cause: err, ...(index >= 0 ? { index } : {}) });
    }
    if (!(bytes instanceof Uint8Array)) {
      const got = bytes === null ? 'null' : typeof bytes === 'object' ? (bytes.constructor?.name ?? 'object') : typeof bytes;
      throw new InvalidArgumentError(`${what} serializer returned ${got}, not a Uint8Array`, index >= 0 ? { index } : {});
    }
    return bytes;
  }
}
