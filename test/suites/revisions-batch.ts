/**
 * PageRevisionStore.putRenders (an import's write): many renders in few atomic updates, stored and
 * read exactly as `putRender` of each in the same order would store them — precedence by (rev, tid),
 * the recency window and its culls, late writes, `ifAbsent`, renders over one value — and nothing
 * written when one render of the call is bad.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECENCY_WINDOW_MS, MAX_VALUE_LENGTH, PageRevisionStore, RenderExistsError, RenderInput } from '../../client';
import { KIND, readPosition } from '../../client/revisions/key-layout';
import { BytesTable, expectInvalid, familyKeys, HOUR, keysOfKind, random, rejection, RevisionsSuiteContext, summary, T0, text, tidAt } from './revisions-context';

const W = DEFAULT_RECENCY_WINDOW_MS;

async function hotRevs(table: BytesTable, title: string): Promise<number[]> {
  return (await keysOfKind(table, title, KIND.RENDER)).map((k) => readPosition(k, 1).rev);
}

/** Counts the table's updates. */
function counting(table: BytesTable): { table: BytesTable; updates: () => number } {
  let updates = 0;
  const proxy = new Proxy(table, {
    get(target, prop) {
      if (prop === 'update') updates++;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { table: proxy, updates: () => updates };
}

export function batchSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore.putRenders', () => {
    it('stores what putRender of each would, in order: out-of-order revs and tids, repeats, several pages', async () => {
      const next = random(31);
      const renders: RenderInput[] = [];
      for (let i = 0; i < 120; i++) {
        const title = ['A', 'B', 'C'][Math.floor(next() * 3)];
        const rev = 1 + Math.floor(next() * 40);
        renders.push({ title, rev, tid: tidAt(T0, Math.floor(next() * 3)), value: `${title}${rev} ${i}`, headers: { n: String(i) }, parts: i % 7 === 0 ? { p: Buffer.from([i]) } : undefined });
      }
      const one = await ctx.store();
      const many = await ctx.store();
      for (const r of renders) await one.store.putRender(r);
      const keys = await many.store.putRenders(renders);
      expect(keys).toEqual(renders.map((r) => ({ title: r.title, rev: r.rev, tid: r.tid })));
      for (const title of ['A', 'B', 'C']) {
        expect(await many.store.getLatest(title)).toEqual(await one.store.getLatest(title));
        const listed = async (s: typeof one.store) => (await s.listRevisions(title, { limit: 1000, allRenders: true })).items;
        expect(await listed(many.store)).toEqual(await listed(one.store));
        // The same renders, the same late writes; the batch's supersessions are folded into fewer entries.
        for (const kind of [KIND.RENDER, KIND.LATE]) expect(await keysOfKind(many.table, title, kind)).toEqual(await keysOfKind(one.table, title, kind));
      }
    });

    it('writes a page history in few updates and keeps its superseded revisions for the window, then a later write culls them', async () => {
      const { table: raw, clock } = await ctx.store();
      const { table, updates } = counting(raw);
      const store = new PageRevisionStore(table, { clock: clock.read });
      const history = Array.from({ length: 300 }, (_, i): RenderInput => ({ title: 'P', rev: i + 1, tid: tidAt(T0 - 300_000 + i * 1000), value: text(2000, i) }));
      await store.putRenders(history);
      // 300 renders of 3 modifications (chunk range, record, room for a late entry): 84 in each update of 256 less 2.
      expect(updates()).toBe(4);
      expect(await hotRevs(raw, 'P')).toHaveLength(300);
      clock.advance(W / 2);
      for (const rev of [1, 150, 299, 300]) expect(summary(await store.getRevision('P', rev))).toEqual(summary({ ...history[rev - 1], tid: history[rev - 1].tid!, headers: {}, parts: {} }));
      clock.advance(W / 2 + 1);
      await store.putRender({ title: 'P', rev: 301, tid: tidAt(clock.now), value: 'r301' });
      expect(await hotRevs(raw, 'P')).toEqual([301, 300]);
      expect(await store.getRevision('P', 299)).toBeNull();
      // One supersession entry per update, each consumed by the cull; r300's (by r301) remains.
      expect(await keysOfKind(raw, 'P', KIND.SUPERSEDED)).toHaveLength(1);
    });

    it('culls what has expired in the same update as the batch, and keeps a late render of the batch for a window from its arrival', async () => {
      const { store, table, clock } = await ctx.store();
      await store.putRenders([1, 2, 3].map((rev) => ({ title: 'P', rev, tid: tidAt(clock.now), value: `r${rev}` })));
      clock.advance(W + HOUR);
      // r1 and r2 expired; r0 arrives late in the batch, below the latest.
      await store.putRenders([4, 0, 5].map((rev) => ({ title: 'P', rev, tid: tidAt(clock.now), value: `r${rev}` })));
      expect(await hotRevs(table, 'P')).toEqual([5, 4, 3, 0]);
      expect((await store.getRevision('P', 0))?.value).toBe('r0');
      clock.advance(W + 1);
      await store.putRender({ title: 'P', rev: 6, tid: tidAt(clock.now), value: 'r6' });
      expect(await hotRevs(table, 'P')).toEqual([6, 5]);
      expect(await keysOfKind(table, 'P', KIND.LATE)).toEqual([]);
    });

    it('puts a render over one value in its turn, and its later repeat wins', async () => {
      const { store } = await ctx.store();
      const big = text(MAX_VALUE_LENGTH + 100_000, 5);
      const tid = tidAt(T0);
      await store.putRenders([
        { title: 'P', rev: 1, tid, value: 'small' },
        { title: 'P', rev: 2, tid, value: big, parts: { html: text(50_000, 6) } },
        { title: 'P', rev: 1, tid, value: 'small, again' },
        { title: 'P', rev: 3, tid, value: 'latest' },
      ]);
      expect(summary(await store.getRevision('P', 2))).toEqual(summary({ title: 'P', rev: 2, tid, value: big, headers: {}, parts: { html: text(50_000, 6) } }));
      expect((await store.getRevision('P', 1))?.value).toBe('small, again');
      expect((await store.getLatest('P'))?.value).toBe('latest');
    });

    it('refuses ifAbsent for a render already stored, naming it, and writes nothing of its update', async () => {
      const { store, table } = await ctx.store();
      const tid = tidAt(T0);
      await store.putRender({ title: 'P', rev: 2, tid, value: 'first' });
      const err = await rejection(
        store.putRenders(
          [1, 2, 3].map((rev) => ({ title: 'P', rev, tid, value: `again ${rev}` })),
          { ifAbsent: true },
        ),
      );
      expect(err).toBeInstanceOf(RenderExistsError);
      expect(err).toMatchObject({ title: 'P', rev: 2, tid });
      expect(await hotRevs(table, 'P')).toEqual([2]);
      expect((await store.getLatest('P'))?.value).toBe('first');
    });

    it('checks every render before writing any: a bad one is named by its index and nothing is written', async () => {
      const { store, table } = await ctx.store();
      const good = { title: 'P', rev: 1, tid: tidAt(T0), value: 'ok' };
      await expectInvalid(store.putRenders([good, { ...good, title: 'Q' }, { ...good, rev: -1 }]), 'renders[2]: rev is -1; the minimum is 0');
      await expectInvalid(store.putRenders([good, null as unknown as RenderInput]), 'renders[1]: a render must be { title, rev, tid?, value, headers?, parts? }, got null');
      await expectInvalid(store.putRenders('P' as unknown as RenderInput[]), 'putRenders needs an array of renders, got string');
      expect(await familyKeys(table, 'P')).toEqual([]);
      expect(await familyKeys(table, 'Q')).toEqual([]);
      expect(await store.putRenders([])).toEqual([]);
    });
  });
}
