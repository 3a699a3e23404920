/**
 * Concurrent editors: of editors at one rev exactly one succeeds and the others get
 * DocumentConflictError — never a lost edit, never two winners; concurrent replication merges every
 * branch; the feed lists each document once after it all.
 */
import { describe, expect, it } from 'vitest';
import { DocumentConflictError, DocumentStore } from '../../client';
import { allChanges, DocumentsSuiteContext, markerCount, posOf, replicated } from './documents-context';

/** Runs `edit` for every store at once; the successes' revs and the failures. */
async function race(stores: DocumentStore[], edit: (s: DocumentStore, i: number) => Promise<{ rev: string }>): Promise<{ wins: { i: number; rev: string }[]; conflicts: number }> {
  const settled = await Promise.allSettled(stores.map((s, i) => edit(s, i)));
  const wins: { i: number; rev: string }[] = [];
  let conflicts = 0;
  settled.forEach((r, i) => {
    if (r.status === 'fulfilled') wins.push({ i, rev: r.value.rev });
    else if (r.reason instanceof DocumentConflictError) conflicts++;
    else throw r.reason;
  });
  return { wins, conflicts };
}

export function concurrencySuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore under concurrent editors', () => {
    it('lets exactly one of two concurrent editors at one rev win, 20 times over', async () => {
      const { store, another } = await ctx.store();
      const editors = [store, another()];
      let rev = (await store.put('doc', { round: 0 })).rev;
      for (let round = 1; round <= 20; round++) {
        const { wins, conflicts } = await race(editors, (s, i) => s.put('doc', { round, editor: i }, { rev }));
        expect([wins.length, conflicts]).toEqual([1, 1]);
        rev = wins[0].rev;
        expect(await store.get('doc', { conflicts: true })).toEqual({ _id: 'doc', _rev: rev, round, editor: wins[0].i });
      }
      expect(posOf(rev)).toBe(21);
      expect((await store.changes()).results.map((r) => [r.id, r.rev])).toEqual([['doc', rev]]);
    });

    it('lets exactly one of 16 racing editors of one document win each round', async () => {
      const { store, another } = await ctx.store();
      const editors = Array.from({ length: 16 }, () => another());
      let rev = (await store.put('doc', { round: 0 })).rev;
      for (let round = 1; round <= 5; round++) {
        const { wins, conflicts } = await race(editors, (s, i) => s.put('doc', { round, editor: i }, { rev }));
        expect([wins.length, conflicts]).toEqual([1, 15]);
        rev = wins[0].rev;
      }
      expect(await store.get('doc', { conflicts: true, deletedConflicts: true, revs: true })).toEqual(expect.objectContaining({ _rev: rev, round: 5 }));
      expect((await store.get('doc', { revs: true }))?._revisions?.ids).toHaveLength(6);
      // 16 racing creators of a new document, and 16 racing deleters: one each.
      expect((await race(editors, (s, i) => s.put('fresh', { editor: i }))).wins).toHaveLength(1);
      const { wins } = await race(editors, (s) => s.remove('doc', rev));
      expect(wins).toHaveLength(1);
      expect(await store.get('doc')).toBeNull();
      const feed = await store.changes();
      expect(feed.results.map((r) => [r.id, r.deleted]).sort()).toEqual([
        ['doc', true],
        ['fresh', false],
      ]);
    });

    it('commits 64 concurrent editors of distinct documents, each listed once; close() waits for their indexing', async () => {
      const { store, table, another } = await ctx.store();
      const editors = Array.from({ length: 4 }, () => another());
      const created = await Promise.all(Array.from({ length: 64 }, (_, i) => editors[i % 4].put(`doc-${i}`, { v: 0 })));
      const updated = await Promise.all(created.map((c, i) => editors[(i + 1) % 4].put(c.id, { v: 1 }, { rev: c.rev })));
      await Promise.all(editors.map((e) => e.close()));
      expect(await markerCount(table, ctx.target().partitionCount)).toBe(0);
      const feed = await allChanges(store);
      expect(feed.map((r) => r.id).sort()).toEqual(updated.map((u) => u.id).sort());
      const revs = new Map(updated.map((u) => [u.id, u.rev]));
      for (const r of feed) expect(r.rev).toBe(revs.get(r.id));
    });

    it('merges every branch replicated by 8 concurrent writers', async () => {
      const { store, another } = await ctx.store();
      await store.bulkDocs([replicated('doc', 1, ['a'])], { newEdits: false });
      const hashes = ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
      await Promise.all(hashes.map((h) => another().bulkDocs([replicated('doc', 2, [h, 'a'], { h }), replicated(`own-${h}`, 1, [h])], { newEdits: false })));
      expect(await store.get('doc', { conflicts: true })).toEqual({ _id: 'doc', _rev: '2-i', h: 'i', _conflicts: ['2-h', '2-g', '2-f', '2-e', '2-d', '2-c', '2-b'] });
      const feed = await store.changes();
      expect(feed.results.map((r) => r.id).sort()).toEqual(['doc', ...hashes.map((h) => `own-${h}`)].sort());
      expect(feed.results.find((r) => r.id === 'doc')?.rev).toBe('2-i');
    });

    it('merges every branch of 8 concurrent replicators creating the same document, counting it once', async () => {
      const { store, another } = await ctx.store();
      // The highest hash first: a creator overwriting the head would leave a lower winner.
      const hashes = ['i', 'h', 'g', 'f', 'e', 'd', 'c', 'b'];
      const writers = hashes.map(() => another());
      await Promise.all(writers.map((w, i) => w.bulkDocs([replicated('new', 1, [hashes[i]], { h: hashes[i] })], { newEdits: false })));
      await Promise.all(writers.map((w) => w.close()));
      expect(await store.get('new', { conflicts: true })).toEqual({ _id: 'new', _rev: '1-i', h: 'i', _conflicts: ['1-h', '1-g', '1-f', '1-e', '1-d', '1-c', '1-b'] });
      expect((await store.openRevs('new', 'all')).map((r) => ('ok' in r ? r.ok._rev : r.missing))).toEqual(hashes.map((h) => `1-${h}`));
      expect((await store.changes({ allLeaves: true })).results.map((r) => [r.id, r.rev, r.leaves?.length])).toEqual([['new', '1-i', 8]]);
      expect((await store.info()).documents).toBe(1);
    });
  });
}
