/**
 * Historical reads: a revision found nowhere is rendered by the `render` callback, stored for
 * `historicalTtlMs` and served from then on; concurrent misses call it once; an exact (rev, tid)
 * read never renders.
 */
import { describe, expect, it } from 'vitest';
import { RenderedRevision } from '../../client';
import { KIND } from '../../client/revisions/key-layout';
import { DAY, expectInvalid, HOUR, keysOfKind, RevisionsSuiteContext, T0, tidAt } from './revisions-context';

/** A render callback that counts its calls and can be held until released. */
function renderer(hold = false) {
  const calls: [string, number][] = [];
  let release: () => void = () => undefined;
  const gate = hold ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const render = async (title: string, rev: number): Promise<RenderedRevision | null> => {
    calls.push([title, rev]);
    await gate;
    if (rev === 404) return null;
    return { value: `rendered ${title} ${rev}`, headers: { 'content-type': 'text/html' }, parts: { 'data-parsoid': `dp ${rev}` } };
  };
  return { calls, render, release: () => release() };
}

export function historicalSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore historical reads', () => {
    it('renders a revision missing everywhere, stores it and serves it from then on', async () => {
      const r = renderer();
      const { store, table, clock } = await ctx.store({ render: r.render, historicalTtlMs: 6 * HOUR });
      await store.putRender({ title: 'P', rev: 10, tid: tidAt(T0), value: 'current' });
      const first = await store.getRevision('P', 3);
      expect(first).toMatchObject({ title: 'P', rev: 3, value: 'rendered P 3', headers: { 'content-type': 'text/html' }, parts: { 'data-parsoid': 'dp 3' } });
      expect(r.calls).toEqual([['P', 3]]);
      clock.advance(HOUR);
      expect(await store.getRevision('P', 3)).toEqual(first);
      expect(await store.getRender('P', 3, first!.tid)).toEqual(first);
      expect(r.calls).toHaveLength(1);
      // Stored apart from the hot renders: never the page's latest, never listed.
      expect((await store.getLatest('P'))?.rev).toBe(10);
      expect((await store.listRevisions('P')).items.map((x) => x.rev)).toEqual([10]);
      expect(await keysOfKind(table, 'P', KIND.HISTORICAL)).toHaveLength(1);
      // Past its TTL it is rendered again.
      clock.advance(5 * HOUR);
      expect((await store.getRevision('P', 3))?.value).toBe('rendered P 3');
      expect(r.calls).toHaveLength(2);
    });

    it('calls render once for concurrent misses of one revision', async () => {
      const r = renderer(true);
      const { store } = await ctx.store({ render: r.render });
      const reads = [1, 2, 3, 4, 5].map(() => store.getRevision('P', 7));
      const other = store.getRevision('Q', 7);
      for (let i = 0; i < 1000 && r.calls.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(r.calls).toEqual([
        ['P', 7],
        ['Q', 7],
      ]);
      r.release();
      const results = await Promise.all(reads);
      expect(new Set(results.map((x) => x?.tid)).size).toBe(1);
      expect(results[0]?.value).toBe('rendered P 7');
      expect((await other)?.value).toBe('rendered Q 7');
      expect((await store.getRevision('P', 7))?.tid).toBe(results[0]?.tid);
      expect(r.calls).toHaveLength(2);
    });

    it('never renders for a hit, an exact (rev, tid) miss, or a revision the callback cannot render', async () => {
      const r = renderer();
      const { store, table } = await ctx.store({ render: r.render });
      await store.putRender({ title: 'P', rev: 1, tid: tidAt(T0), value: 'hot' });
      expect((await store.getRevision('P', 1))?.value).toBe('hot');
      expect(await store.getRender('P', 2, tidAt(T0))).toBeNull();
      expect(await store.getLatest('Q')).toBeNull();
      expect(r.calls).toEqual([]);
      expect(await store.getRevision('P', 404)).toBeNull();
      expect(r.calls).toEqual([['P', 404]]);
      expect(await keysOfKind(table, 'P', KIND.HISTORICAL)).toEqual([]);
    });

    it('checks what render returns and stores nothing when it is bad', async () => {
      const { store, table } = await ctx.store({ render: async () => ({ value: 42 }) as never });
      await expectInvalid(store.getRevision('P', 1), 'value must be a string or a Uint8Array, got number');
      const tidded = await ctx.store({ render: async () => ({ value: 'x', tid: 'nope' }) });
      await expectInvalid(tidded.store.getRevision('P', 1), 'tid is "nope"; it must be a time-based (version 1) UUID such as 6ba7b810-9dad-11d1-80b4-00c04fd430c8');
      expect(await keysOfKind(table, 'P', KIND.HISTORICAL)).toEqual([]);
    });

    it('keeps the tid render gives, and serves a later hot render before the historical one', async () => {
      const tid = tidAt(T0 - DAY);
      const { store, clock } = await ctx.store({ render: async () => ({ value: 'old', tid }) });
      expect((await store.getRevision('P', 2))?.tid).toBe(tid);
      clock.advance(1);
      await store.putRender({ title: 'P', rev: 2, tid: tidAt(clock.now), value: 'new' });
      expect((await store.getRevision('P', 2))?.value).toBe('new');
      expect((await store.getRender('P', 2, tid))?.value).toBe('old');
    });
  });
}
