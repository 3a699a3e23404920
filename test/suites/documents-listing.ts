/**
 * What a CouchDB endpoint needs beyond edits and the feed (issue 34): allDocs (ranges merged from
 * every partition, keys, limits, documents with conflicts), openRevs (all leaves, given revs, latest),
 * the feed's leaves per document (`style=all_docs`), a changes read that waits for a change
 * (longpoll), info, and revsDiff of documents never written.
 */
import { describe, expect, it } from 'vitest';
import { DocumentStore, MAX_CHANGES_WAIT_MS, partitionOf } from '../../client';
import { FOLD_AT } from '../../client/documents/feed-counts';
import { FOLD_EVERY } from '../../client/documents/feed-index';
import { feedFamilies } from '../../client/documents/feed-layout';
import { COUNT_PREFIX, ID_PREFIX } from '../../client/documents/key-layout';
import { BytesTable, DocumentsSuiteContext, expectInvalid, failingFeedWrites, markerCount, replicated } from './documents-context';

/** Live and deleted documents as the changes feed lists them (each document once, at its newest change). */
async function countedByFeed(store: DocumentStore): Promise<[number, number]> {
  const { results } = await store.changes();
  return [results.filter((r) => !r.deleted).length, results.filter((r) => r.deleted).length];
}

/** The count records (summary and deltas) of each feed family of the table. */
async function countRecords(table: BytesTable, partitionCount: number): Promise<number[]> {
  return Promise.all(
    feedFamilies(partitionCount).map(async (family) => {
      let n = 0;
      for await (const page of table.keyIterator(family, { prefix: COUNT_PREFIX })) n += page.items.length;
      return n;
    }),
  );
}

/** `count` document ids `<prefix>-<i>` of partition 0 (of `partitionCount`). */
function idsOfFirstPartition(prefix: string, count: number, partitionCount: number): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) if (partitionOf(partitionCount, `d/${prefix}-${i}`) === 0) ids.push(`${prefix}-${i}`);
  return ids;
}

/**
 * Replicates a first revision of each document in a bulk of its own, then closes `writer` (which waits
 * for the indexing): a bulk's documents of one partition are indexed in one update, so one count delta each.
 */
async function replicateOneByOne(writer: DocumentStore, ids: string[]): Promise<void> {
  for (const id of ids) await writer.bulkDocs([replicated(id, 1, ['h'])], { newEdits: false });
  await writer.close();
}

/** Rewrites the table's feed families as a build from before counts were kept left them: 8-byte id entries, no count records. */
async function asWrittenBeforeCounts(table: BytesTable, partitionCount: number): Promise<void> {
  for (const family of feedFamilies(partitionCount)) {
    const ids = [];
    for await (const page of table.entryIterator(family, { prefix: ID_PREFIX })) ids.push(...page.items);
    await table.update(family, [{ type: 'removeRange', prefix: COUNT_PREFIX }, ...ids.map((e) => ({ type: 'put' as const, key: e.key, value: e.value.subarray(0, 8) }))]);
  }
}

export function listingSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore.allDocs', () => {
    it('lists live documents of every partition in id order, with ranges, descending, skip and limit', async () => {
      const { store } = await ctx.store();
      const ids = Array.from({ length: 40 }, (_, i) => `doc-${String(i).padStart(2, '0')}`);
      const n = ctx.target().partitionCount;
      expect(new Set(ids.map((id) => partitionOf(n, `d/${id}`))).size).toBe(n);
      const revs = new Map<string, string>();
      for (const id of [...ids].reverse()) revs.set(id, (await store.put(id, { id })).rev);
      await store.remove('doc-05', revs.get('doc-05')!);
      const live = ids.filter((id) => id !== 'doc-05');
      const all = await store.allDocs();
      expect(all.rows).toEqual(live.map((id) => ({ id, rev: revs.get(id), deleted: false })));
      expect((await store.allDocs({ startKey: 'doc-03', endKey: 'doc-07' })).rows.map((r) => r.id)).toEqual(['doc-03', 'doc-04', 'doc-06', 'doc-07']);
      expect((await store.allDocs({ startKey: 'doc-03', endKey: 'doc-07', inclusiveEnd: false })).rows.map((r) => r.id)).toEqual(['doc-03', 'doc-04', 'doc-06']);
      expect((await store.allDocs({ startKey: 'doc-07', endKey: 'doc-03', descending: true })).rows.map((r) => r.id)).toEqual(['doc-07', 'doc-06', 'doc-04', 'doc-03']);
      expect((await store.allDocs({ startKey: 'doc-07', endKey: 'doc-03', descending: true, inclusiveEnd: false })).rows.map((r) => r.id)).toEqual(['doc-07', 'doc-06', 'doc-04']);
      expect((await store.allDocs({ skip: 3, limit: 4 })).rows.map((r) => r.id)).toEqual(live.slice(3, 7));
      expect((await store.allDocs({ descending: true, limit: 2 })).rows.map((r) => r.id)).toEqual(['doc-39', 'doc-38']);
      expect((await store.allDocs({ startKey: 'doc-1', endKey: 'doc-1\uffff' })).rows.map((r) => r.id)).toEqual(ids.slice(10, 20));
      expect((await store.allDocs({ limit: 0 })).rows).toEqual([]);
      expect((await store.allDocs({ startKey: 'zzz' })).rows).toEqual([]);
    });

    it('reads given keys in their order: missing ones with rev null, deleted ones flagged', async () => {
      const { store } = await ctx.store();
      const a = await store.put('a', { v: 1 });
      const b = await store.put('b', { v: 2 });
      const gone = await store.remove('b', b.rev);
      const rows = (await store.allDocs({ keys: ['b', 'nope', 'a'], includeDocs: true })).rows;
      expect(rows).toEqual([
        { id: 'b', rev: gone.rev, deleted: true, doc: null },
        { id: 'nope', rev: null, deleted: false, doc: null },
        { id: 'a', rev: a.rev, deleted: false, doc: { _id: 'a', _rev: a.rev, v: 1 } },
      ]);
      expect((await store.allDocs({ keys: ['b', 'nope', 'a'], descending: true, limit: 1 })).rows.map((r) => r.id)).toEqual(['a']);
    });

    it('adds each winner with its conflicts when asked', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('x', 2, ['b', 'a'], { v: 'b' }), replicated('x', 2, ['c', 'a'], { v: 'c' }), replicated('y', 1, ['y'], { v: 'y' })], { newEdits: false });
      expect((await store.allDocs({ includeDocs: true, conflicts: true })).rows).toEqual([
        { id: 'x', rev: '2-c', deleted: false, doc: { _id: 'x', _rev: '2-c', v: 'c', _conflicts: ['2-b'] } },
        { id: 'y', rev: '1-y', deleted: false, doc: { _id: 'y', _rev: '1-y', v: 'y' } },
      ]);
      expect((await store.allDocs({ includeDocs: true })).rows[0].doc).toEqual({ _id: 'x', _rev: '2-c', v: 'c' });
    });

    it('lists a document whose writer died before indexing it (the read repairs first)', async () => {
      const { store, table } = await ctx.store();
      await store.put('indexed', {});
      // A writer whose every feed update fails, as if it died after committing: only its marker is left.
      const dying = new DocumentStore(failingFeedWrites(table), ctx.target().storeOptions);
      await dying.bulkDocs([replicated('late', 1, ['l'])], { newEdits: false });
      await dying.close();
      expect(await markerCount(table, ctx.target().partitionCount, 'late')).toBe(1);
      expect((await store.allDocs()).rows.map((r) => r.id)).toEqual(['indexed', 'late']);
      expect(await markerCount(table, ctx.target().partitionCount, 'late')).toBe(1);
    });

    it('refuses bad options by name', async () => {
      const { store } = await ctx.store();
      await expectInvalid(store.allDocs({ startKey: 'b', endKey: 'a' }), 'endKey sorts before startKey: no document can match (swap them, or change descending)');
      await expectInvalid(store.allDocs({ startKey: 'a', endKey: 'b', descending: true }), 'startKey sorts before endKey: no document can match (swap them, or change descending)');
      await expectInvalid(store.allDocs({ limit: -1 }), 'limit is -1; it must be an integer from 0 to 100000');
      await expectInvalid(store.allDocs({ keys: 'a' as never }), 'keys must be an array of document ids, got "a"');
      await expectInvalid(store.allDocs({ keys: [1 as never] }), 'keys[0] must be a string, got 1');
      await expectInvalid(store.allDocs({ startKey: 'x'.repeat(3000) }), 'startKey is 3000 bytes; the maximum is 2046');
    });
  });

  describe('DocumentStore.openRevs', () => {
    it('reads every leaf, given leaves, and with latest the leaves descending from an inner rev', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('d', 3, ['c', 'b', 'a'], { v: 'c' }), replicated('d', 2, ['x', 'a'], { v: 'x' }, true)], { newEdits: false });
      expect(await store.openRevs('d', 'all')).toEqual([{ ok: { _id: 'd', _rev: '3-c', v: 'c' } }, { ok: { _id: 'd', _rev: '2-x', v: 'x', _deleted: true } }]);
      expect(await store.openRevs('d', ['2-x', '3-c', '2-b', '9-z'], { revs: true })).toEqual([
        { ok: { _id: 'd', _rev: '2-x', v: 'x', _deleted: true, _revisions: { start: 2, ids: ['x', 'a'] } } },
        { ok: { _id: 'd', _rev: '3-c', v: 'c', _revisions: { start: 3, ids: ['c', 'b', 'a'] } } },
        { missing: '2-b' },
        { missing: '9-z' },
      ]);
      expect(await store.openRevs('d', ['2-b', '1-a'], { latest: true })).toEqual([{ ok: { _id: 'd', _rev: '3-c', v: 'c' } }, { ok: { _id: 'd', _rev: '2-x', v: 'x', _deleted: true } }]);
      expect(await store.openRevs('missing', 'all')).toEqual([]);
      expect(await store.openRevs('missing', ['1-a'], { latest: true })).toEqual([{ missing: '1-a' }]);
      await expectInvalid(store.openRevs('d', ['2_b']), 'revs[0] "2_b" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)');
    });
  });

  describe('DocumentStore.changes for replicators', () => {
    it('lists every leaf of each document with allLeaves, the winner first', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('c', 2, ['b', 'a']), replicated('c', 2, ['c', 'a']), replicated('c', 2, ['d', 'a'], {}, true), replicated('s', 1, ['s'])], { newEdits: false });
      const feed = await store.changes({ allLeaves: true });
      expect(feed.results.map((r) => [r.id, r.rev, r.leaves])).toEqual([
        ['c', '2-c', ['2-c', '2-b', '2-d']],
        ['s', '1-s', ['1-s']],
      ]);
      expect((await store.changes()).results[0].leaves).toBeUndefined();
    });

    it('waits for a change with timeoutMs and answers as soon as one is made', async () => {
      const { store, another } = await ctx.store();
      await store.put('first', {});
      const { lastSeq } = await store.changes();
      const writer = another();
      const waiting = store.changes({ since: lastSeq, timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 300));
      await writer.put('second', { by: 'another client' });
      const got = await waiting;
      expect(got.results.map((r) => r.id)).toEqual(['second']);
      await writer.close();
    });

    it('answers with nothing when the wait times out or is aborted', async () => {
      const { store } = await ctx.store();
      const { lastSeq } = await store.changes();
      const timedOut = await store.changes({ since: lastSeq, timeoutMs: 250 });
      expect(timedOut.results).toEqual([]);
      const abort = new AbortController();
      const waiting = store.changes({ since: timedOut.lastSeq, timeoutMs: 60_000, signal: abort.signal });
      setTimeout(() => abort.abort(), 100);
      expect((await waiting).results).toEqual([]);
      await expectInvalid(store.changes({ timeoutMs: MAX_CHANGES_WAIT_MS + 1 }), `timeoutMs is ${MAX_CHANGES_WAIT_MS + 1}; it must be an integer from 0 to ${MAX_CHANGES_WAIT_MS}`);
    });
  });

  describe('DocumentStore.info and revsDiff', () => {
    it('counts documents and deleted documents, and gives a sequence after which only new changes come', async () => {
      const { store } = await ctx.store();
      expect(await store.info()).toEqual({ documents: 0, deletedDocuments: 0, updateSeq: expect.any(String) });
      for (let i = 0; i < 12; i++) await store.put(`doc-${i}`, { i });
      const gone = await store.get('doc-3');
      await store.remove('doc-3', gone!._rev);
      const info = await store.info();
      expect([info.documents, info.deletedDocuments]).toEqual([11, 1]);
      await store.put('later', {});
      expect((await store.changes({ since: info.updateSeq })).results.map((r) => r.id)).toEqual(['later']);
      const now = await store.updateSeq();
      expect((await store.changes({ since: now })).results).toEqual([]);
    });

    it('keeps its counts exact through edits, deletions, recreations, replicated branches and folds', async () => {
      const { store, table, another } = await ctx.store();
      const n = ctx.target().partitionCount;
      const expectCounts = async (): Promise<void> => {
        const info = await store.info();
        expect([info.documents, info.deletedDocuments]).toEqual(await countedByFeed(store));
      };
      // More index updates with a delta in one partition than a count reads before folding them.
      const crowded = idsOfFirstPartition('crowd', FOLD_AT + 16, n);
      await replicateOneByOne(another(), crowded);
      expect((await countRecords(table, n))[0]).toBe(FOLD_AT + 16);
      const revs = new Map(crowded.map((id) => [id, '1-h']));
      const others = Array.from({ length: 30 }, (_, i) => `other-${i}`);
      await store.bulkDocs(
        others.map((id, i) => replicated(id, 1, [`a${i}`], { i }, i % 5 === 0)),
        { newEdits: false },
      );
      await expectCounts();
      // The count folded the crowded partition's deltas into its summary.
      expect((await countRecords(table, n))[0]).toBe(1);
      for (const id of crowded.slice(0, 10)) revs.set(id, (await store.remove(id, revs.get(id)!)).rev);
      for (const id of crowded.slice(10, 20)) revs.set(id, (await store.put(id, { again: true }, { rev: revs.get(id) })).rev);
      // Re-created after their deletion (no rev: a deleted leaf is not edited).
      for (const id of crowded.slice(0, 3)) await store.put(id, { back: true });
      // A deleted branch that sorts above the live one, then a live branch that beats it.
      await store.bulkDocs([replicated('other-1', 2, ['zz', 'a1'], {}, true)], { newEdits: false });
      await expectCounts();
      await store.bulkDocs([replicated('other-1', 3, ['b', 'x', 'a1'])], { newEdits: false });
      await store.bulkDocs([replicated('other-0', 2, ['b', 'a0'])], { newEdits: false });
      await expectCounts();
      // The same bulk again changes nothing.
      await store.bulkDocs([replicated('other-0', 2, ['b', 'a0'])], { newEdits: false });
      await expectCounts();
      expect(Math.max(...(await countRecords(table, n)))).toBeLessThan(FOLD_AT + 1);
    });

    it('folds the deltas it writes now and then, with no count asking', async () => {
      const { store, table, another } = await ctx.store();
      const n = ctx.target().partitionCount;
      await store.info();
      await replicateOneByOne(another(), idsOfFirstPartition('f', FOLD_EVERY + 20, n));
      // The writer folded once, after FOLD_EVERY deltas: what is left is the summary and the deltas after that fold.
      expect((await countRecords(table, n))[0]).toBeLessThanOrEqual(21);
      expect((await store.info()).documents).toBe(FOLD_EVERY + 20);
    });

    it('counts right while edits and other counts run at once', async () => {
      const { store, another } = await ctx.store();
      const reader = another();
      const writers = Array.from({ length: 4 }, () => another());
      const totals: number[] = [];
      await Promise.all([
        ...writers.map(async (w, k) => {
          for (let i = 0; i < 60; i++) {
            const id = `w${k}-${i % 20}`;
            const doc = await w.get(id);
            if (doc === null) await w.put(id, { i });
            else if (i % 3 === 0) await w.remove(id, doc._rev);
            else await w.put(id, { i }, { rev: doc._rev });
          }
        }),
        (async () => {
          for (let i = 0; i < 8; i++) {
            const seen = await reader.info();
            totals.push(seen.documents + seen.deletedDocuments);
          }
        })(),
      ]);
      await Promise.all(writers.map((w) => w.close()));
      const info = await store.info();
      expect([info.documents, info.deletedDocuments]).toEqual(await countedByFeed(store));
      expect(info.documents + info.deletedDocuments).toBe(80);
      // A document once counted stays counted (live or deleted): no count read runs backwards.
      expect(totals).toEqual([...totals].sort((x, y) => x - y));
      expect(totals[totals.length - 1]).toBeLessThanOrEqual(80);
      await reader.close();
    });

    it('counts a table written before counts were kept from its change entries, until every document is counted', async () => {
      const { store, table } = await ctx.store();
      const n = ctx.target().partitionCount;
      const revs = new Map<string, string>();
      for (let i = 0; i < 24; i++) revs.set(`old-${i}`, (await store.put(`old-${i}`, { i })).rev);
      for (let i = 0; i < 4; i++) revs.set(`old-${i}`, (await store.remove(`old-${i}`, revs.get(`old-${i}`)!)).rev);
      await asWrittenBeforeCounts(table, n);
      const legacy = await store.info();
      expect([legacy.documents, legacy.deletedDocuments]).toEqual([20, 4]);
      expect(await countRecords(table, n)).toEqual(new Array(n).fill(0));
      // Edits re-index documents one by one; the counts stay exact meanwhile.
      for (let i = 0; i < 24; i++) {
        revs.set(`old-${i}`, (await store.put(`old-${i}`, { i, v: 2 }, i < 4 ? {} : { rev: revs.get(`old-${i}`) })).rev);
        if (i % 8 === 7) {
          const info = await store.info();
          expect([info.documents, info.deletedDocuments]).toEqual(await countedByFeed(store));
        }
      }
      const info = await store.info();
      expect([info.documents, info.deletedDocuments]).toEqual([24, 0]);
      // Every document now counted: every feed family keeps counts again.
      expect((await countRecords(table, n)).every((c) => c >= 1)).toBe(true);
    });

    it('says every rev of a document never written is missing, and leaves out documents missing nothing', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('known', 2, ['b', 'a'])], { newEdits: false });
      expect(await store.revsDiff({ fresh: ['1-a', '2-b', '1-a'], known: ['2-b', '1-a'], partly: [], mixed: ['3-c'] })).toEqual({ fresh: { missing: ['1-a', '2-b'] }, mixed: { missing: ['3-c'] } });
      expect(await store.revsDiff({ known: ['3-c', '2-b'] })).toEqual({ known: { missing: ['3-c'], possible_ancestors: ['2-b'] } });
    });
  });
}
