/**
 * What the parts of the table conformance suite share: the target and context they run against, and
 * small helpers.
 */
import { IteratorItem, KeyValueTable, KeyValueTableConfig, Serializers, Version } from '../../client';
import { rejection as rejectionOf } from './rejections';

/** What the suite runs against. */
export interface TableTarget {
  /** The partition count of the tables {@link TableTarget.table} makes (more than one). */
  readonly partitionCount: number;
  /** A fresh, empty table with these serializers and a name of its own. */
  table<K, V>(config: KeyValueTableConfig<K, V>): Promise<KeyValueTable<K, V>>;
  /** Lets at least `ms` pass on the clock that expires entries (a fake clock moves; a real one is waited for). */
  advance(ms: number): Promise<void>;
  dispose(): Promise<void>;
}

/** What the suite's parts share. */
export interface TableSuiteContext {
  target(): TableTarget;
  /** A fresh table of UTF-8 keys and values. */
  strings(): Promise<KeyValueTable<string, string>>;
  /** A fresh table of raw byte keys and UTF-8 values. */
  bytes(): Promise<KeyValueTable<Uint8Array, string>>;
}

/** Serializers of a table of UTF-8 keys and values. */
export const utf8 = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };

/** What `p` rejects with (fails the test when it resolves), with the fields the table's errors carry. */
export const rejection = (p: Promise<unknown>) => rejectionOf<{ code?: string; index?: number; key?: unknown; segment?: string; table?: string }>(p);

/** What `f` throws (fails the test when it returns). */
export function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
}

/** More pages than any iteration of the suite has: an iteration that goes on past them never ends. */
const MAX_PAGES = 100;

/** Every page of an iteration; fails one that goes on past {@link MAX_PAGES} (it would never end). */
export async function pagesOf<T>(it: AsyncIterable<IteratorItem<T>>): Promise<IteratorItem<T>[]> {
  const out: IteratorItem<T>[] = [];
  for await (const page of it) {
    out.push(page);
    if (out.length > MAX_PAGES) throw new Error(`the iteration did not end within ${MAX_PAGES} pages`);
  }
  return out;
}

/** `v` with its sequence moved by `by`: a well-formed version of the same segment that is not current. */
export const bump = (v: Version, by: number): Version => Version.fromString(`${v.segmentId}.${BigInt(v.sequence) + BigInt(by)}`);

/** The message a conditional failure carries: the store's words, then the key and table. */
export const conditionMessage = (table: KeyValueTable<unknown, unknown>, text: string, key: string): string => `${text} (key ${JSON.stringify(key)} of table ${table.name})`;
