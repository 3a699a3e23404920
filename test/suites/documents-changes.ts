/**
 * The changes feed: each document once at its newest change, in the order of those changes, resumable
 * from any seq; deletions; a change whose writer died before indexing it; bad sequences.
 */
import { describe, expect, it } from 'vitest';
import { DocumentStore, partitionOf } from '../../client';
import { feedFamilies } from '../../client/documents/feed-layout';
import { allChanges, beforeFeedListing, BytesTable, delayedFeedWrites, DocumentsSuiteContext, expectInvalid, failingFeedWrites, markerCount, random } from './documents-context';

/**
 * The table, where the first iterator over a feed family's change entries (not its markers) first
 * runs `edit`: an edit indexed between a changes read's clock stamp and its listing. With `only`,
 * the first iterator over that feed family's.
 */
function editBeforeListing(table: BytesTable, edit: () => Promise<unknown>, only?: string): BytesTable {
  let done = false;
  return beforeFeedListing(table, (family) => {
    if (done || (only !== undefined && family !== only)) return undefined;
    done = true;
    return edit();
  });
}

export function changesSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore.changes', () => {
    it("lists a document whose change an edit moves past the read's clock while the read lists (a CouchDB snapshot would show it)", async () => {
      const { store, table } = await ctx.store();
      const ids = Array.from({ length: 8 }, (_, i) => `moved-${i}`);
      const revs = new Map<string, string>();
      for (const id of ids) revs.set(id, (await store.put(id, { v: 1 })).rev);
      const since = (await store.changes()).lastSeq;
      for (const id of ids) revs.set(id, (await store.put(id, { v: 2 }, { rev: revs.get(id)! })).rev);
      // Between the reader's stamp and its listing, every document is edited again: its change entry
      // moves from below the stamp to above it in one update. Before the fix the read listed none of them.
      const reader = new DocumentStore(
        editBeforeListing(table, () => Promise.all(ids.map(async (id) => revs.set(id, (await store.put(id, { v: 3 }, { rev: revs.get(id)! })).rev)))),
        ctx.target().storeOptions,
      );
      const feed = await reader.changes({ since });
      expect(new Set(feed.results.map((r) => r.id))).toEqual(new Set(ids));
      // Read again from where it ended: nothing is lost, and what was listed past the stamp may repeat.
      const again = await store.changes({ since: feed.lastSeq });
      for (const r of again.results) expect(ids).toContain(r.id);
    });

    it('resumes below a change listed past its clock, so a change committed before it but indexed after it is not missed', async () => {
      const { store, table } = await ctx.store();
      const n = ctx.target().partitionCount;
      // Two documents of one partition: `early` commits first but is indexed last.
      const ids = Array.from({ length: 64 }, (_, i) => `pair-${i}`);
      const early = ids[0];
      const [later, before] = ids.filter((id, i) => i > 0 && partitionOf(n, `d/${id}`) === partitionOf(n, `d/${early}`));
      const since = (await store.changes()).lastSeq;
      // A change of the partition before the read, so that the read has something to list there.
      await store.put(before, { v: 1 });
      let openGate = (): void => undefined;
      const gate = new Promise<void>((r) => (openGate = r));
      const gated = new DocumentStore(
        delayedFeedWrites(table, () => gate),
        ctx.target().storeOptions,
      );
      let earlyRev = '';
      // After the reader's clock and repair, before it lists: `early` commits (its indexing held), then
      // `later` commits and is indexed, past the reader's clock.
      const reader = new DocumentStore(
        editBeforeListing(
          table,
          async () => {
            earlyRev = (await gated.put(early, { v: 1 })).rev;
            const other = new DocumentStore(table, ctx.target().storeOptions);
            await other.put(later, { v: 1 });
            await other.close();
          },
          feedFamilies(n)[partitionOf(n, `d/${later}`)],
        ),
        ctx.target().storeOptions,
      );
      const first = await reader.changes({ since });
      expect(first.results.map((r) => r.id)).toEqual([before, later]);
      openGate();
      await gated.close();
      // `early` resolved before this read began: resuming must list it, although its seq is below `later`'s.
      const next = await store.changes({ since: first.lastSeq });
      expect(next.results.map((r) => [r.id, r.rev])).toContainEqual([early, earlyRev]);
    });

    it('lists each of 100 documents once at its newest change after 1,000 updates, resumed from three points', async () => {
      const { store } = await ctx.store();
      const n = ctx.target().partitionCount;
      const ids = Array.from({ length: 100 }, (_, i) => `doc-${i}`);
      expect(new Set(ids.map((id) => partitionOf(n, `d/${id}`))).size).toBe(n);
      const revs = new Map<string, string>();
      const lastWrite = new Map<string, number>();
      const next = random(33);
      for (let i = 0; i < 1000; i++) {
        const id = i < 100 ? ids[i] : ids[Math.floor(next() * ids.length)];
        const rev = revs.get(id);
        revs.set(id, (await store.put(id, { i }, rev === undefined ? {} : { rev })).rev);
        lastWrite.set(id, i);
      }
      const byLastWrite = (list: string[]) => [...list].sort((a, b) => lastWrite.get(a)! - lastWrite.get(b)!);
      const feed = await store.changes();
      expect(feed.results.map((r) => r.id)).toEqual(byLastWrite(ids));
      for (const r of feed.results) expect([r.rev, r.deleted]).toEqual([revs.get(r.id), false]);
      expect(new Set(feed.results.map((r) => r.seq)).size).toBe(100);
      expect(await allChanges(store, undefined, 7)).toEqual(feed.results.map((r) => expect.objectContaining({ id: r.id, rev: r.rev })));
      expect((await store.changes({ since: feed.lastSeq })).results).toEqual([]);

      const points = [24, 49, 89];
      for (const k of points) expect((await store.changes({ since: feed.results[k].seq })).results.map((r) => [r.id, r.rev])).toEqual(feed.results.slice(k + 1).map((r) => [r.id, r.rev]));
      // Ten more updates: from each point, the documents not updated since, then the updated ones.
      const updated: string[] = [];
      for (let i = 0; i < 10; i++) {
        const id = ids[(i * 37) % 100];
        revs.set(id, (await store.put(id, { again: i }, { rev: revs.get(id)! })).rev);
        updated.push(id);
        lastWrite.set(id, 1000 + i);
      }
      for (const k of points) {
        const expected = [
          ...feed.results
            .slice(k + 1)
            .filter((r) => !updated.includes(r.id))
            .map((r) => r.id),
          ...updated,
        ];
        const resumed = await store.changes({ since: feed.results[k].seq });
        expect(resumed.results.map((r) => [r.id, r.rev])).toEqual(expected.map((id) => [id, revs.get(id)]));
        expect((await allChanges(store, feed.results[k].seq, 6)).map((r) => r.id)).toEqual(expected);
      }
      expect((await store.changes({ since: feed.lastSeq })).results.map((r) => r.id)).toEqual(updated);
      expect((await store.changes({ since: feed.lastSeq, limit: 3 })).results.map((r) => r.id)).toEqual(updated.slice(0, 3));
    });

    it('flags a deleted winner, and lists a document again when it changes after a read', async () => {
      const { store } = await ctx.store();
      const a = await store.put('a', { v: 1 });
      const b = await store.put('b', { v: 1 });
      const gone = await store.remove('a', a.rev);
      const first = await store.changes();
      expect(first.results.map((r) => [r.id, r.rev, r.deleted])).toEqual([
        ['b', b.rev, false],
        ['a', gone.rev, true],
      ]);
      const back = await store.put('a', { v: 2 });
      expect((await store.changes({ since: first.lastSeq })).results.map((r) => [r.id, r.rev, r.deleted])).toEqual([['a', back.rev, false]]);
      expect((await store.changes({ since: first.results[0].seq })).results.map((r) => r.id)).toEqual(['a']);
    });

    it('lists a change whose writer died before indexing it, once, and ends its marker after the lease', async () => {
      const { store, table } = await ctx.store();
      const n = ctx.target().partitionCount;
      let now = Date.UTC(2026, 0, 1);
      const dying = new DocumentStore(failingFeedWrites(table), { ...ctx.target().storeOptions, clock: () => now });
      const one = await dying.put('doc', { v: 1 });
      const other = await store.put('other', { v: 1 });
      expect(await markerCount(table, n, 'doc')).toBe(1);
      const reader = new DocumentStore(table, { ...ctx.target().storeOptions, clock: () => now, markerLeaseMs: 60_000 });
      const feed = await reader.changes();
      expect(feed.results.map((r) => [r.id, r.rev]).sort()).toEqual([
        ['doc', one.rev],
        ['other', other.rev],
      ]);
      expect(await markerCount(table, n, 'doc')).toBe(1);
      expect((await reader.changes({ since: feed.lastSeq })).results).toEqual([]);
      now += 60_001;
      expect((await reader.changes({ since: feed.lastSeq })).results).toEqual([]);
      expect(await markerCount(table, n, 'doc')).toBe(0);
      // The document's next edit, indexed normally, moves its entry.
      const two = await store.put('doc', { v: 2 }, { rev: one.rev });
      expect((await reader.changes()).results.map((r) => [r.id, r.rev])).toEqual([
        ['other', other.rev],
        ['doc', two.rev],
      ]);
    });

    it('reads a sequence of another table from the beginning, and refuses a malformed one', async () => {
      const { store } = await ctx.store();
      const { store: elsewhere } = await ctx.store();
      await store.put('a', { v: 1 });
      // The other table has seen more writes in every partition: its positions are past this table's changes.
      for (let i = 0; i < 20; i++) await elsewhere.put(`z${i}`, { v: i });
      const foreign = (await elsewhere.changes()).lastSeq;
      expect((await store.changes({ since: foreign })).results.map((r) => r.id)).toEqual(['a']);
      const seq = (await store.changes()).lastSeq;
      await expectInvalid(store.changes({ since: seq.slice(0, -2) }), 'since is not a sequence of this changes feed: malformed');
      await expectInvalid(store.changes({ since: 'now' }), 'since is not a sequence of this changes feed: malformed');
      await expectInvalid(store.changes({ since: 5 as never }), 'since is not a sequence of this changes feed: expected a non-empty string, got number');
      await expectInvalid(store.changes({ limit: 0 }), 'limit is 0; it must be an integer from 1 to 100000');
    });
  });
}
