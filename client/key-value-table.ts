/**
 * A key-value table (DESIGN §2). Keys and values go through the table's serializers; keys are
 * routed by the MurmurHash3 of their family (or of the key without one) to a partition's segment.
 *
 * Atomicity: a single-key operation is atomic. Multi-key updates (putAll, replaceAll, removeAll,
 * update) need a key family and are atomic within it: every condition is checked against the state
 * before the batch, then everything is applied or nothing is. Versions are per segment, so a version
 * from another partition never satisfies a condition.
 *
 * Retries: reads are retried on UNAVAILABLE within the deadline; updates (unconditional ones too)
 * only when the request surely did not reach the store — otherwise `UnavailableError.maybeApplied` is
 * true and the caller should read back. (Sent again, an update could be applied twice, over another
 * client's write made in between.)
 */
import { MAX_GET_KEYS, MAX_ITERATOR_PAGE_ITEMS } from '../proto/limits';
import type { Entry, SubResponse } from '../proto/messages';
import { InvalidArgumentError, ObjectClosedError, ServiceError, TableNotFoundError } from './errors';
import { routingPoint, partitionIndex } from './internal/hashing';
import { decodeState, IteratorState } from './internal/iterator-state';
import type { Route, RoutingTable } from './internal/routing';
import { getKeyBytes } from './internal/wire-codec';
import { iteratePages } from './internal/table-iterator';
import type { PageItemBuilder } from './internal/wire-decoder';
import { StaleGrouping, TableTransport } from './internal/table-transport';
import { EncodedModifications, MODIFICATION_TYPES, NO_TTL, UpdateEncoder } from './internal/update-encoder';
import { versionsOf } from './internal/update-versions';
import {
  checkBatchBytes, checkBatchCount, checkBoolean, checkFamily, checkKey, checkPageSize, checkTtl, checkValue, checkVersion, DuplicateKeyCheck, kindOf, listOf,
} from './internal/validation';
import { rangeDeserializer, Serializer } from './serializers';
import type { IteratorItem, IteratorOptions, TableEntry, TableEntryUpdate, TableKey, TableModification, TtlOptions } from './types';
import { Version } from './version';
import { DEFAULT_ITERATOR_PAGE_ITEMS } from './limits';

const EMPTY = Buffer.alloc(0);

/** A prepared batch: encoded modifications plus what is needed to route it and name its keys. */
interface Batch {
  point: number;
  modifications: EncodedModifications;
  keys: unknown[];
}

/** A table of keys K and values V; obtain one from `KeyValueTableFactory.forKeyValueTable`. */
export class KeyValueTable<K, V> implements AsyncDisposable {
  private closed = false;

  /** @internal Created by KeyValueTableFactory. */
  constructor(
    /** `scope/table`. */
    readonly name: string,
    private readonly transport: TableTransport,
    private readonly keySerializer: Serializer<K>,
    private readonly valueSerializer: Serializer<V>,
    private readonly onClose: () => void = () => undefined,
  ) {}

  /** Unconditional upsert; resolves the new version. */
  async put(family: string | null, key: K, value: V, options?: TtlOptions): Promise<Version> {
    return (await this.single(family, 'PUT', key, value, undefined, options?.ttlMs))!;
  }

  /** Inserts a key that must be absent. @throws BadKeyVersionError when the key exists. */
  async putIfAbsent(family: string | null, key: K, value: V, options?: TtlOptions): Promise<Version> {
    return (await this.single(family, 'INSERT', key, value, undefined, options?.ttlMs))!;
  }

  /**
   * Replaces a key only while its version equals `version` (with `ttlMs`, the new entry expires).
   * @throws BadKeyVersionError on a version mismatch; NoSuchKeyError when the key is missing.
   */
  async replace(family: string | null, key: K, value: V, version: Version, options?: TtlOptions): Promise<Version> {
    if (version === undefined || version === null) throw new InvalidArgumentError('replace needs a version (Version.NO_VERSION for none)');
    return (await this.single(family, 'PUT', key, value, version, options?.ttlMs))!;
  }

  /** Removes a key; with a version only while it is current. Removing a missing key unconditionally succeeds. */
  async remove(family: string | null, key: K, version?: Version): Promise<void> {
    await this.single(family, 'REMOVE', key, undefined, version);
  }

  /** Atomic unconditional upsert of many keys of one family; versions in input order. */
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

  /** Atomic conditional upsert: each entry may carry a version or NOT_EXISTS; the error names the failing key. */
  async replaceAll(family: string, entries: Iterable<TableEntryUpdate<K, V>>): Promise<Version[]> {
    const mods = listOf(entries, 'replaceAll', 'entries').map((e, i): TableModification<K, V> => {
      if (e === null || typeof e !== 'object') throw new InvalidArgumentError(`replaceAll entry ${i} must be an object { key, value, version? }, got ${kindOf(e)}`, { index: i });
      return { type: 'put', key: e.key, value: e.value, version: e.version };
    });
    return (await this.updateAs('replaceAll', family, mods)) as Version[];
  }

  /** Atomic removal of many keys of one family, each optionally conditional. */
  async removeAll(family: string, keys: Iterable<TableKey<K>>): Promise<void> {
    const mods = listOf(keys, 'removeAll', 'keys').map((k, i): TableModification<K, V> => {
      if (k === null || typeof k !== 'object') throw new InvalidArgumentError(`removeAll entry ${i} must be an object { key, version? }, got ${kindOf(k)}`, { index: i });
      return { type: 'remove', key: k.key, version: k.version };
    });
    await this.updateAs('removeAll', family, mods);
  }

  /**
   * One atomic batch within one family mixing insert / put / remove / removeRange; resolves one
   * `Version` per insert or put and `null` per remove or removeRange, in order.
   */
  update(family: string, modifications: Iterable<TableModification<K, V>>): Promise<(Version | null)[]> {
    return this.updateAs('update', family, modifications);
  }

  private async updateAs(operation: string, family: string, modifications: Iterable<TableModification<K, V>>): Promise<(Version | null)[]> {
    this.checkOpen();
    const familyLength = checkFamily(family, true, operation);
    const mods = listOf(modifications, operation, 'modifications');
    checkBatchCount(mods.length);
    if (mods.length === 0) return [];
    const batch = this.prepare(family, familyLength, mods);
    return this.send(batch);
  }

  /** The entry of a key, or null. */
  async get(family: string | null, key: K): Promise<TableEntry<K, V> | null> {
    return (await this.getAll(family, [key]))[0];
  }

  /** True when the key exists. */
  async exists(family: string | null, key: K): Promise<boolean> {
    return (await this.get(family, key)) !== null;
  }

  /** Entries of many keys (null when absent) in input order; keys without a family may span partitions. */
  async getAll(family: string | null, keys: Iterable<K>): Promise<(TableEntry<K, V> | null)[]> {
    this.checkOpen();
    const familyLength = checkFamily(family);
    const list = listOf(keys, 'getAll', 'keys');
    if (list.length === 0) return [];
    const bytes = list.map((k, i) => this.serializeKey(k, familyLength, i));
    const out: (TableEntry<K, V> | null)[] = new Array(list.length).fill(null);
    await this.readKeys({ family, familyLength, list, bytes, out }, list.map((_, i) => i));
    return out;
  }

  /**
   * Reads the keys of `read` at `indexes` into `read.out`. Family-less keys are grouped by partition
   * with the routing at hand; should a retry find the table with another partition count (deleted and
   * created again), the group is regrouped with that routing rather than sent whole to one partition.
   */
  private async readKeys(read: KeysRead<K, V>, indexes: number[]): Promise<void> {
    const { family, bytes } = read;
    let groups = [indexes];
    let partitionCount: number | undefined;
    if (family === null && indexes.length > 1) {
      const routing = await this.transport.routingTable();
      partitionCount = routing.partitionCount;
      groups = groupByPartition(indexes, (i) => partitionIndex(routingPoint(null, bytes[i]), routing.partitionCount));
    }
    const fam = family ?? '';
    const keyBytes = (i: number) => getKeyBytes(read.familyLength, bytes[i].length);
    await Promise.all(groups.flatMap((group) => slices(group, MAX_GET_KEYS, GET_REQUEST_BYTES, keyBytes).map(async (slice) => {
      const point = routingPoint(family, bytes[slice[0]]);
      const refs = slice.map((i) => ({ family: fam, key: bytes[i] }));
      let answer: { response: SubResponse; segmentId: string };
      try {
        answer = await this.transport.execute((t) => {
          if (partitionCount !== undefined && t.partitionCount !== partitionCount) throw new StaleGrouping(t.partitionCount);
          return t.routeOf(point);
        }, (segment) => ({ get: { segmentId: segment, keys: refs } }), { read: true, keyAt: (i) => read.list[slice[i]] });
      } catch (err) {
        if (err instanceof StaleGrouping) return this.readKeys(read, slice);
        throw err;
      }
      const entries = answer.response.get?.entries ?? [];
      if (entries.length !== refs.length) throw new ServiceError(`the store answered ${entries.length} entries for ${refs.length} keys`, { code: 'SERVICE_ERROR' });
      slice.forEach((i, j) => (read.out[i] = entries[j]?.found ? this.entryOf(read.list[i], entries[j], answer.segmentId) : null));
    })));
  }

  /** Pages of the keys (with versions) of one family, in unsigned bytewise order. */
  keyIterator(family: string, options: IteratorOptions<K> = {}): AsyncIterable<IteratorItem<TableKey<K>>> {
    const key = rangeDeserializer(this.keySerializer);
    return this.pages(family, options, false, (segmentId) => (b, ks, ke, _vs, _ve, sequence) => ({ key: key(b, ks, ke), version: Version.of(segmentId, sequence) }));
  }

  /** Pages of the entries of one family, in unsigned bytewise key order. */
  entryIterator(family: string, options: IteratorOptions<K> = {}): AsyncIterable<IteratorItem<TableEntry<K, V>>> {
    const key = rangeDeserializer(this.keySerializer);
    const value = rangeDeserializer(this.valueSerializer);
    return this.pages(family, options, true, (segmentId) => (b, ks, ke, vs, ve, sequence) => ({
      key: key(b, ks, ke), value: value(b, vs, ve), version: Version.of(segmentId, sequence),
    }));
  }

  /**
   * Pages of every entry of the table, all key families and the family-less keys, partition after
   * partition (within a partition: families in storage order, each in key order). For export and
   * audits; the pages are not a snapshot: writes made meanwhile may or may not be seen. The `state` of
   * a page is informational (scans cannot be resumed).
   */
  async *scanEntries(options: { maxKeysAtOnce?: number } = {}): AsyncGenerator<IteratorItem<TableEntry<K, V> & { family: string | null }>> {
    this.checkOpen();
    const maxItems = Math.min(options.maxKeysAtOnce ?? DEFAULT_ITERATOR_PAGE_ITEMS, MAX_ITERATOR_PAGE_ITEMS);
    // The partitions as the controller has them now (a cached routing may be of a table since deleted).
    const routing = await this.transport.routingTable(true);
    for (const start of routing.allRoutes()) {
      const partition = start.partition;
      const pick = (t: RoutingTable): Route => {
        const route = t.allRoutes()[partition];
        if (t.partitionCount === routing.partitionCount && route.segmentId === start.segmentId) return route;
        throw new TableNotFoundError(
          `table ${this.name} changed during the scan: partition ${partition} of ${routing.partitionCount} was segment ${start.segmentId}, and the table now has ${t.partitionCount} partitions (deleted and created again, or a store removed); scan again`,
          { table: this.name },
        );
      };
      let after: Uint8Array = Buffer.alloc(0);
      for (;;) {
        this.checkOpen();
        const { response, route } = await this.transport.read('Scan', pick, (segmentId) => ({ segmentId, includeValues: true, maxItems, after }));
        const items = response.items.map((e) => ({
          family: e.family === '' ? null : e.family,
          key: this.keySerializer.deserialize(e.key),
          value: this.valueSerializer.deserialize(e.value),
          version: Version.of(route.segmentId, e.sequence),
        }));
        after = response.position;
        if (items.length > 0) yield { items, state: `${partition}:${Buffer.from(after).toString('base64url')}` };
        if (response.done || response.items.length === 0) break;
      }
    }
  }

  /** Closes this table handle; later calls fail with ObjectClosedError. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.transport.close();
    this.onClose();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async single(family: string | null, type: 'PUT' | 'INSERT' | 'REMOVE', key: K, value: V | undefined, version?: Version, ttlMs?: number): Promise<Version | null> {
    this.checkOpen();
    const familyLength = checkFamily(family);
    const condition = checkVersion(version);
    const keyBytes = this.serializeKey(key, familyLength);
    // Only a remove has no value: a put of `undefined` goes through the serializer like any value
    // (JSON refuses it; an empty value stored for it could never be read back).
    const valueBytes = type === 'REMOVE' ? EMPTY : this.serializeValue(value as V);
    const encoder = new UpdateEncoder(family ?? '', 1);
    encoder.add(MODIFICATION_TYPES[type], keyBytes, valueBytes, condition, checkTtl(ttlMs));
    const batch: Batch = {
      point: routingPoint(family, keyBytes), modifications: encoder.finish(), keys: [key],
    };
    return (await this.send(batch))[0];
  }

  /** Validates, serializes and encodes a batch of one family (nothing is sent when anything is wrong). */
  private prepare(family: string, familyLength: number, mods: TableModification<K, V>[]): Batch {
    const encoder = new UpdateEncoder(family, mods.length);
    const duplicates = new DuplicateKeyCheck(mods.length);
    const keys: unknown[] = new Array(mods.length);
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      if (m?.type === 'removeRange') {
        encoder.addRange(this.boundOf(m.from, familyLength), this.boundOf(m.to, familyLength), this.boundOf(m.prefix, familyLength));
        keys[i] = undefined;
        continue;
      }
      duplicates.add(this.addModification(encoder, familyLength, m, i), i, m.key);
      keys[i] = m.key;
    }
    checkBatchBytes(encoder.dataBytes);
    return { point: routingPoint(family, EMPTY), modifications: encoder.finish(), keys };
  }

  /**
   * Validates and serializes one insert, put or remove (key, value, version, ttl, in this order), adds
   * it to `encoder` and returns its serialized key.
   */
  private addModification(encoder: UpdateEncoder, familyLength: number, m: TableModification<K, V>, i: number): Uint8Array {
    switch (m?.type) {
      case 'insert': {
        const key = this.serializeKey(m.key, familyLength, i);
        encoder.add(MODIFICATION_TYPES.INSERT, key, this.serializeValue(m.value, i), undefined, checkTtl(m.ttlMs, i));
        return key;
      }
      case 'put': {
        const key = this.serializeKey(m.key, familyLength, i);
        encoder.add(MODIFICATION_TYPES.PUT, key, this.serializeValue(m.value, i), checkVersion(m.version, i), checkTtl(m.ttlMs, i));
        return key;
      }
      case 'remove': {
        const key = this.serializeKey(m.key, familyLength, i);
        encoder.add(MODIFICATION_TYPES.REMOVE, key, EMPTY, checkVersion(m.version, i), NO_TTL);
        return key;
      }
      default:
        throw new InvalidArgumentError(`modification ${i} has type ${JSON.stringify((m as { type?: unknown })?.type)}; expected insert, put, remove or removeRange`, { index: i });
    }
  }

  /** Sends a prepared batch; resolves the version of each modification (null for removes). */
  private async send(batch: Batch): Promise<(Version | null)[]> {
    const { modifications, keys } = batch;
    const { response, segmentId } = await this.transport.execute(
      (t) => t.routeOf(batch.point),
      (segment) => ({ update: { segmentId: segment, modifications } }),
      { keyAt: (i) => keys[i] },
    );
    return versionsOf(response.update ?? undefined, modifications.types, segmentId);
  }

  private pages<T>(family: string, given: IteratorOptions<K> | null, entries: boolean, builder: (segmentId: string) => PageItemBuilder<T>): AsyncIterable<IteratorItem<T>> {
    this.checkOpen();
    checkFamily(family, true, entries ? 'entryIterator' : 'keyIterator');
    const options = given ?? {};
    checkBoolean('reverse', options.reverse);
    checkBoolean('toInclusive', options.toInclusive);
    const start = options.fromState !== undefined ? decodeState(options.fromState, this.name, family, entries) : this.freshState(family, options, entries);
    const point = routingPoint(family, EMPTY);
    const transport = this.transport;
    const self = this;
    return {
      // Each iteration starts from the beginning with its own state: iterating the iterable again (or
      // twice at once) gives the same pages, as an AsyncIterable should.
      async *[Symbol.asyncIterator]() {
        for await (const page of iteratePages(transport, (t) => t.routeOf(point), { ...start }, builder)) {
          self.checkOpen();
          yield page;
        }
      },
    };
  }

  private freshState(family: string, options: IteratorOptions<K>, entries: boolean): IteratorState {
    const maxKeysAtOnce = options.maxKeysAtOnce ?? DEFAULT_ITERATOR_PAGE_ITEMS;
    checkPageSize(maxKeysAtOnce);
    const familyLength = family ? Buffer.byteLength(family) : 0;
    return {
      table: this.name, family, entries, maxKeysAtOnce,
      prefix: this.boundOf(options.prefix, familyLength), from: this.boundOf(options.from, familyLength), to: this.boundOf(options.to, familyLength),
      toInclusive: options.toInclusive === true, reverse: options.reverse === true, after: undefined, done: false,
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

  private entryOf(key: K, e: Entry, segmentId: string): TableEntry<K, V> {
    return { key, value: this.valueSerializer.deserialize(e.value), version: Version.of(segmentId, e.sequence) };
  }

  private checkOpen(): void {
    if (this.closed) throw new ObjectClosedError(`table ${this.name} is closed`, { table: this.name });
  }
}

/** A getAll under way: its keys, serialized, and where their entries go. */
interface KeysRead<K, V> {
  family: string | null;
  familyLength: number;
  list: K[];
  bytes: Uint8Array[];
  out: (TableEntry<K, V> | null)[];
}

/** Encoded bytes of the keys of one Get sub-request at most (a store answers at most 32 MiB of entries). */
const GET_REQUEST_BYTES = 4 * 1024 * 1024;

/** `indexes` grouped by `partitionOf`, each group in input order. */
function groupByPartition(indexes: number[], partitionOf: (i: number) => number): number[][] {
  const groups = new Map<number, number[]>();
  for (const i of indexes) {
    const p = partitionOf(i);
    const g = groups.get(p);
    if (g) g.push(i);
    else groups.set(p, [i]);
  }
  return [...groups.values()];
}

/** `items` cut into runs of at most `maxCount` items and `maxBytes` (by `bytesOf`; a larger item goes alone). */
function slices(items: number[], maxCount: number, maxBytes: number, bytesOf: (item: number) => number): number[][] {
  const out: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  for (const item of items) {
    const b = bytesOf(item);
    if (current.length > 0 && (current.length >= maxCount || bytes + b > maxBytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += b;
  }
  if (current.length > 0) out.push(current);
  return out;
}
