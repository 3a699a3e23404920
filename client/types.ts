/** The public shapes of table operations (DESIGN §7). */
import type { Version } from './version';

/** A key, optionally with the version it must have (a condition) for an update to apply. */
export interface TableKey<K> {
  key: K;
  /** Condition: the key's current version, `Version.NOT_EXISTS`, or absent/`NO_VERSION` for none. */
  version?: Version;
}

/** An entry as returned by reads. */
export interface TableEntry<K, V> {
  key: K;
  value: V;
  version: Version;
}

/** An entry to write conditionally (replaceAll): `version` may be a version or `Version.NOT_EXISTS`. */
export interface TableEntryUpdate<K, V> {
  key: K;
  value: V;
  version?: Version;
}

/** One modification of an atomic {@link KeyValueTable.update} batch. */
export type TableModification<K, V> =
  | { type: 'insert'; key: K; value: V; ttlMs?: number }
  | { type: 'put'; key: K; value: V; version?: Version; ttlMs?: number }
  | { type: 'remove'; key: K; version?: Version }
  | { type: 'removeRange'; from?: K; to?: K; prefix?: K };

/** One page of an iterator; pass `state` back as `fromState` to continue after this page. */
export interface IteratorItem<T> {
  items: T[];
  state: string;
}

/**
 * Options of keyIterator / entryIterator. Keys come in unsigned bytewise order of their serialized
 * form (descending with `reverse`).
 */
export interface IteratorOptions<K> {
  /** Items per page (the last page may hold fewer, and the 2 MiB page cap may end a page early). @default 10 */
  maxKeysAtOnce?: number;
  /** Only keys whose serialized form starts with this key's serialized form. */
  prefix?: K;
  /** Inclusive lower bound. */
  from?: K;
  /** Upper bound, exclusive unless `toInclusive`. */
  to?: K;
  /** @default false */
  toInclusive?: boolean;
  /** Descending order. @default false */
  reverse?: boolean;
  /** Resume token from a page's `state`: the iteration continues exactly after that page (it carries all other options). */
  fromState?: string;
}

/** Per-entry expiry, honoured on read by the segment store's clock (the in-memory table's: its `clock`). */
export interface TtlOptions {
  /** Milliseconds until the entry expires. */
  ttlMs?: number;
}

/** Options of scanEntries. */
export interface ScanOptions {
  /** Items per page at most (a page never spans two partitions). @default 10 */
  maxKeysAtOnce?: number;
}

/** An entry as a scan returns it: with its key family (null for a family-less key). */
export type ScannedEntry<K, V> = TableEntry<K, V> & { family: string | null };
