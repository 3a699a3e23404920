/**
 * What the parts of the document store suite share: the target they run against (fresh tables of
 * bytes keys and values, in memory or on a cluster), stores on them, and small helpers.
 */
import { expect } from 'vitest';
import { feedFamilies } from '../../client/documents/feed-layout';
import { FEED_FAMILY_PREFIX, idOfMarkerKey, MARKER_PREFIX } from '../../client/documents/key-layout';
import { DocumentConflictError, DocumentStore, DocumentStoreOptions, KeyValueTable, ReplicatedDocument, StoredDocument, UnavailableError } from '../../client';
import { seededRandom } from '../../bench/core/keys';
import { rejection } from './rejections';

export { expectInvalid, rejection } from './rejections';

export type BytesTable = KeyValueTable<Uint8Array, Uint8Array>;

/** What the suite runs against. */
export interface DocumentsTarget {
  /** A fresh, empty table of bytes keys and values (Serializers.bytes for both) of `partitionCount` partitions. */
  table(): Promise<BytesTable>;
  /** The partition count of the tables. */
  readonly partitionCount: number;
  /** Options every store on this target needs (the gRPC table does not expose its partition count). */
  readonly storeOptions: DocumentStoreOptions;
  dispose(): Promise<void>;
}

/** A store on a fresh table. */
export interface StoreUnderTest {
  store: DocumentStore;
  table: BytesTable;
  /** Another store on the same table (another client). */
  another(options?: DocumentStoreOptions): DocumentStore;
}

/** What the suite's parts share. */
export interface DocumentsSuiteContext {
  target(): DocumentsTarget;
  /** A store on a fresh table with these options. */
  store(options?: DocumentStoreOptions): Promise<StoreUnderTest>;
}

/** Asserts a DocumentConflictError whose message matches. */
export async function expectConflict(p: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await rejection(p);
  expect(err).toBeInstanceOf(DocumentConflictError);
  expect(err.code).toBe('DOCUMENT_CONFLICT');
  expect(err.message).toMatch(message);
}

/** A replicated revision: leaf `rev`, path `ids` (newest first) ending at its position. */
export function replicated(id: string, start: number, ids: string[], body: Record<string, unknown> = {}, deleted = false): ReplicatedDocument {
  return { _id: id, _rev: `${start}-${ids[0]}`, _revisions: { start, ids }, ...(deleted ? { _deleted: true } : {}), ...body };
}

/** The hash of a rev. */
export function hashOf(rev: string): string {
  return rev.slice(rev.indexOf('-') + 1);
}

/** The position of a rev. */
export function posOf(rev: string): number {
  return Number(rev.slice(0, rev.indexOf('-')));
}

/** The rev of a document read (fails the test when it is null). */
export function revOf(doc: StoredDocument | null): string {
  expect(doc).not.toBeNull();
  return doc!._rev;
}

/** Every change of a store, read `limit` at a time (all at once without one), from `since`. */
export async function allChanges(store: DocumentStore, since?: string, limit?: number): Promise<{ id: string; seq: string; rev: string; deleted: boolean }[]> {
  const out: { id: string; seq: string; rev: string; deleted: boolean }[] = [];
  let seq = since;
  for (let i = 0; i < 100_000; i++) {
    const page = await store.changes({ ...(seq === undefined ? {} : { since: seq }), ...(limit === undefined ? {} : { limit }) });
    out.push(...page.results);
    seq = page.lastSeq;
    if (limit === undefined || page.results.length < limit) return out;
  }
  throw new Error('the feed did not end');
}

/** The markers of edits under way (or whose indexing has not ended) in the table; of document `id` only, when given. */
export async function markerCount(table: BytesTable, partitionCount: number, id?: string): Promise<number> {
  let n = 0;
  for (const family of feedFamilies(partitionCount)) {
    for await (const page of table.keyIterator(family, { prefix: MARKER_PREFIX })) n += page.items.filter((k) => id === undefined || idOfMarkerKey(k.key) === id).length;
  }
  return n;
}

/** Deterministic pseudo-random numbers (mulberry32), so that a failure can be replayed. */
export const random = seededRandom;

/** The table, with every update of a feed family (an index update) started once `wait()` resolves. */
export function delayedFeedWrites(table: BytesTable, wait: () => Promise<unknown>): BytesTable {
  return new Proxy(table, {
    get(t, prop) {
      if (prop === 'update') {
        return async (family: string, mods: never) => {
          if (family.startsWith(FEED_FAMILY_PREFIX)) await wait();
          return t.update(family, mods);
        };
      }
      const v = (t as unknown as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

/** The table, with every update of a feed family failing as if its writer died first (markers go by putAll, so they still land). */
export function failingFeedWrites(table: BytesTable): BytesTable {
  return delayedFeedWrites(table, () => Promise.reject(new UnavailableError('injected: the writer died')));
}

/**
 * The table, where each iterator over a feed family's change entries (not its markers) first awaits
 * what `wait(family)` returns; undefined: it starts at once.
 */
export function beforeFeedListing(table: BytesTable, wait: (family: string) => Promise<unknown> | undefined): BytesTable {
  return new Proxy(table, {
    get(t, prop) {
      if (prop === 'entryIterator') {
        return (family: string, options?: { prefix?: unknown }) => {
          const waiting = family.startsWith(FEED_FAMILY_PREFIX) && options?.prefix === undefined ? wait(family) : undefined;
          if (waiting === undefined) return t.entryIterator(family, options as never);
          return (async function* () {
            await waiting;
            yield* t.entryIterator(family, options as never);
          })();
        };
      }
      const v = (t as unknown as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}
