/**
 * The contract of a key-value table (DESIGN §2, §7). Two implementations honour it: the gRPC table a
 * {@link KeyValueTableFactory} hands out (`GrpcKeyValueTable`), and `InMemoryKeyValueTable`, the
 * same semantics without a server, for unit tests. One conformance suite (test/suites/) runs
 * against both, so they cannot drift apart.
 */
import type { IteratorItem, IteratorOptions, ScannedEntry, ScanOptions, TableEntry, TableEntryUpdate, TableKey, TableModification, TtlOptions } from './types';
import type { Version } from './version';

/**
 * A table of keys K and values V. Keys and values go through the table's serializers; a key lives
 * in the partition its key family hashes to (MurmurHash3 of the family's UTF-8, or of the serialized
 * key without a family), and each partition is one table segment.
 *
 * Versions: every write of a key gives it a new {@link Version}, the segment's id and a sequence
 * that strictly increases within the segment. A condition holds only for the key's current version
 * of the key's own segment: a version of another partition (or another table) never matches.
 * Expired entries (`ttlMs`) are absent for reads and conditions alike.
 *
 * Atomicity: a single-key operation is atomic. Multi-key updates (putAll, replaceAll, removeAll,
 * update) need a key family and are atomic within it: every condition is checked against the state
 * before the batch, then the modifications are applied in order, all of them or none. Bad input
 * (a limit, a duplicate key, a malformed version) fails with InvalidArgumentError before anything
 * is written; a failed condition with a {@link ConditionalTableUpdateError} naming the key and its
 * index in the batch.
 *
 * Iteration: keyIterator and entryIterator page through one family in unsigned bytewise order of
 * the serialized keys. Pages hold exactly `maxKeysAtOnce` items (the last one fewer), unless the
 * 2 MiB page cap ends a page first. The pages are not a snapshot: each page continues strictly after
 * (before, in reverse) the last key returned, so no key comes twice, and a key written or removed
 * between pages shows up or not according to its position relative to that key. A page's `state`
 * resumes the iteration exactly after that page, in this process or another.
 *
 * Every method throws ObjectClosedError once the table is closed.
 */
export interface KeyValueTable<K, V> extends AsyncDisposable {
  /** `scope/table` (the in-memory table: the name it was given). */
  readonly name: string;

  /** Unconditional upsert; resolves the new version. */
  put(family: string | null, key: K, value: V, options?: TtlOptions): Promise<Version>;

  /** Inserts a key that must be absent. @throws BadKeyVersionError when the key exists. */
  putIfAbsent(family: string | null, key: K, value: V, options?: TtlOptions): Promise<Version>;

  /**
   * Replaces a key only while its version equals `version` (`Version.NO_VERSION`: unconditionally;
   * `Version.NOT_EXISTS`: only while absent); with `ttlMs`, the new entry expires.
   * @throws BadKeyVersionError on a version mismatch; NoSuchKeyError when the key is missing.
   */
  replace(family: string | null, key: K, value: V, version: Version, options?: TtlOptions): Promise<Version>;

  /**
   * Removes a key; with a version only while it is current. Removing a missing key unconditionally succeeds.
   * @throws BadKeyVersionError on a version mismatch; NoSuchKeyError when a conditional removal finds no key.
   */
  remove(family: string | null, key: K, version?: Version): Promise<void>;

  /** Atomic unconditional upsert of many keys of one family; versions in input order. */
  putAll(family: string, entries: Iterable<readonly [K, V]>, options?: TtlOptions): Promise<Version[]>;

  /**
   * Atomic conditional upsert: each entry may carry a version or NOT_EXISTS; all or nothing.
   * @throws ConditionalTableUpdateError naming the failing key (`key`, `index`).
   */
  replaceAll(family: string, entries: Iterable<TableEntryUpdate<K, V>>): Promise<Version[]>;

  /** Atomic removal of many keys of one family, each optionally conditional. */
  removeAll(family: string, keys: Iterable<TableKey<K>>): Promise<void>;

  /**
   * One atomic batch within one family mixing insert / put / remove / removeRange; resolves one
   * `Version` per insert or put and `null` per remove or removeRange, in order.
   */
  update(family: string, modifications: Iterable<TableModification<K, V>>): Promise<(Version | null)[]>;

  /** The entry of a key, or null. */
  get(family: string | null, key: K): Promise<TableEntry<K, V> | null>;

  /** True when the key exists. */
  exists(family: string | null, key: K): Promise<boolean>;

  /** Entries of many keys (null when absent) in input order; keys without a family may span partitions. */
  getAll(family: string | null, keys: Iterable<K>): Promise<(TableEntry<K, V> | null)[]>;

  /**
   * Pages of the keys (with versions) of one family, in unsigned bytewise order.
   * @throws InvalidArgumentError (at once) for a bad option or a malformed or foreign `fromState`.
   */
  keyIterator(family: string, options?: IteratorOptions<K>): AsyncIterable<IteratorItem<TableKey<K>>>;

  /**
   * Pages of the entries of one family, in unsigned bytewise key order.
   * @throws InvalidArgumentError (at once) for a bad option or a malformed or foreign `fromState`.
   */
  entryIterator(family: string, options?: IteratorOptions<K>): AsyncIterable<IteratorItem<TableEntry<K, V>>>;

  /**
   * Pages of every entry of the table, all key families and the family-less keys, partition after
   * partition (within a partition: families in storage order, each in key order, then the
   * family-less keys). For export and audits; the pages are not a snapshot: writes made meanwhile
   * may or may not be seen. The `state` of a page is informational (scans cannot be resumed).
   * @throws TableNotFoundError (gRPC table) when the table is deleted during the scan, or a
   *   partition's segment changes under it (the table created again, a store removed): scan again.
   */
  scanEntries(options?: ScanOptions): AsyncGenerator<IteratorItem<ScannedEntry<K, V>>>;

  /** Closes this table handle; later calls fail with ObjectClosedError. Idempotent. */
  close(): Promise<void>;
}
