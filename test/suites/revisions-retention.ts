/**
 * The recency window of PageRevisionStore: superseded renders stay readable for the window after they
 * were superseded, a later write culls what has expired in its own atomic update, a late write is
 * kept for a window from its arrival (even when it races a cull), and a page's family stays bounded
 * however rarely it is written (RESTBase's T192689).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECENCY_WINDOW_MS, PageRevisionStore } from '../../client';
import { KIND, readPosition } from '../../client/revisions/key-layout';
import { BytesTable, DAY, FakeClock, familyKeys, HOUR, keysOfKind, random, RevisionsSuiteContext, tidAt } from './revisions-context';

const W = DEFAULT_RECENCY_WINDOW_MS;

/** The revisions of the hot render records of a page, in key order (newest first). */
async function hotRevs(table: BytesTable, title: string): Promise<number[]> {
  return (await keysOfKind(table, title, KIND.RENDER)).map((k) => readPosition(k, 1).rev);
}

/** `table` whose first update holding a range removal of renders first runs `hook` (a concurrent writer). */
function racing(table: BytesTable, hook: () => Promise<void>): BytesTable {
  let fired = false;
  return new Proxy(table, {
    get(target, prop) {
      if (prop === 'update') {
        return async (family: string, mods: { type: string; from?: Uint8Array }[]) => {
          if (!fired && mods.some((m) => m.type === 'removeRange' && m.from?.[0] === KIND.RENDER)) {
            fired = true;
            await hook();
          }
          return target.update(family, mods as never);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Writes 1,250 revisions of one page over simulated months — mostly minutes apart, sometimes hours,
 * and every 200th after a gap longer than RESTBase's 30-day timeline TTL — checking every 100 that
 * the family holds at most the renders superseded within the window, the latest and their timeline
 * (2 keys a write in the last window, plus 2). Resolves the simulated time it spanned.
 */
async function boundedPage(table: BytesTable, store: PageRevisionStore, title: string, clock: FakeClock, seed: number): Promise<number> {
  const next = random(192689 + seed);
  const times: number[] = [];
  const start = clock.now;
  for (let rev = 1; rev <= 1250; rev++) {
    const longGap = rev % 200 === 0;
    const roll = next();
    const gap = longGap ? 31 * DAY + next() * 10 * DAY : roll < 0.04 ? HOUR + next() * 11 * HOUR : -Math.log(1 - next()) * 20 * 60_000;
    if (rev > 1) clock.advance(Math.round(gap));
    times.push(clock.now);
    await store.putRender({ title, rev, tid: tidAt(clock.now), value: `revision ${rev}` });
    if (longGap) {
      // Everything older than the window went at once: the latest and the one it superseded now.
      expect(await hotRevs(table, title)).toEqual([rev, rev - 1]);
    }
    if (rev % 100 === 0) {
      const inWindow = times.filter((t) => t > clock.now - W).length;
      const keys = await familyKeys(table, title);
      expect(keys.filter((k) => k[0] === KIND.RENDER).length, `${title} revision ${rev}`).toBeLessThanOrEqual(inWindow + 1);
      expect(keys.length, `${title} revision ${rev}`).toBeLessThanOrEqual(2 * inWindow + 2);
    }
  }
  expect((await store.getLatest(title))?.rev).toBe(1250);
  return clock.now - start;
}

export function retentionSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore recency window', () => {
    it('keeps a superseded revision readable for the window, then a later write culls it from the family', async () => {
      const { store, table, clock } = await ctx.store();
      const put = (rev: number) => store.putRender({ title: 'P', rev, tid: tidAt(clock.now), value: `r${rev}` });
      await put(1);
      await put(2); // r1 superseded at T0
      clock.advance(W / 2);
      expect((await store.getRevision('P', 1))?.value).toBe('r1');
      await put(3); // r2 superseded at T0 + W/2; nothing has expired yet
      expect(await hotRevs(table, 'P')).toEqual([3, 2, 1]);
      clock.advance(W / 2 + 1);
      // Expired, but no write has culled it yet: still read (culling is best-effort, never required).
      expect((await store.getRevision('P', 1))?.value).toBe('r1');
      await put(4);
      expect(await hotRevs(table, 'P')).toEqual([4, 3, 2]);
      expect(await store.getRevision('P', 1)).toBeNull();
      expect((await store.getRevision('P', 2))?.value).toBe('r2');
      // The supersession of r1 went with it; those of r2 and r3 remain.
      expect((await keysOfKind(table, 'P', KIND.SUPERSEDED)).length).toBe(2);
      clock.advance(W / 2);
      await put(5);
      expect(await hotRevs(table, 'P')).toEqual([5, 4, 3]);
    });

    it('counts the window from when a revision was superseded, not from when it was written', async () => {
      const { store, table, clock } = await ctx.store();
      await store.putRender({ title: 'P', rev: 1, tid: tidAt(clock.now), value: 'r1' });
      clock.advance(10 * DAY);
      await store.putRender({ title: 'P', rev: 2, tid: tidAt(clock.now), value: 'r2' });
      clock.advance(W - HOUR);
      await store.putRender({ title: 'P', rev: 3, tid: tidAt(clock.now), value: 'r3' });
      expect(await hotRevs(table, 'P')).toEqual([3, 2, 1]);
      clock.advance(2 * HOUR);
      await store.putRender({ title: 'P', rev: 4, tid: tidAt(clock.now), value: 'r4' });
      expect(await hotRevs(table, 'P')).toEqual([4, 3, 2]);
    });

    it('culls older renders of one revision a window after a newer render superseded them', async () => {
      const { store, clock } = await ctx.store();
      const a = tidAt(clock.now);
      await store.putRender({ title: 'P', rev: 1, tid: a, value: 'a' });
      clock.advance(HOUR);
      const b = tidAt(clock.now);
      await store.putRender({ title: 'P', rev: 1, tid: b, value: 'b' }); // a superseded at T0 + 1 h
      clock.advance(W + HOUR);
      const c = tidAt(clock.now);
      await store.putRender({ title: 'P', rev: 1, tid: c, value: 'c' });
      expect(await store.getRender('P', 1, a)).toBeNull();
      expect((await store.getRender('P', 1, b))?.value).toBe('b');
      expect((await store.getRevision('P', 1))?.tid).toBe(c);
    });

    it('keeps a late write of an old revision for a window from its arrival, then culls it', async () => {
      const { store, table, clock } = await ctx.store();
      const put = (rev: number) => store.putRender({ title: 'P', rev, tid: tidAt(clock.now), value: `r${rev}` });
      await put(10);
      await put(11); // r10 superseded at T0
      clock.advance(W - HOUR);
      await put(3); // late: superseded on arrival, at T0 + W - 1 h
      clock.advance(HOUR + 1);
      await put(12); // r10's supersession has expired: the cull's range ≤ r10 goes around r3
      expect(await hotRevs(table, 'P')).toEqual([12, 11, 3]);
      expect((await store.getRevision('P', 3))?.value).toBe('r3');
      clock.advance(W - 1);
      await put(13); // r3 has expired now, r11 (superseded at T0 + W + 1) has not
      expect(await hotRevs(table, 'P')).toEqual([13, 12, 11]);
      expect(await keysOfKind(table, 'P', KIND.LATE)).toEqual([]);
    });

    it('keeps a late write that lands while a cull is under way (the cull starts over around it)', async () => {
      const { store, table, clock } = await ctx.store();
      const put = (s: typeof store, rev: number) => s.putRender({ title: 'P', rev, tid: tidAt(clock.now), value: `r${rev}` });
      await put(store, 10);
      await put(store, 11);
      clock.advance(W + 1);
      const { PageRevisionStore } = await import('../../client');
      const other = new PageRevisionStore(table, { clock: clock.read });
      const raced = new PageRevisionStore(
        racing(table, () => put(other, 5).then(() => undefined)),
        { clock: clock.read },
      );
      await put(raced, 12);
      expect(await hotRevs(table, 'P')).toEqual([12, 11, 5]);
      expect((await store.getRevision('P', 5))?.value).toBe('r5');
    });

    it('keeps the families of pages bounded over 10,000 revisions spread over simulated months (T192689)', { timeout: 300_000 }, async () => {
      // 8 pages of 1,250 revisions each, written at once (each page in order, on its own clock).
      const { table } = await ctx.store();
      const spans = await Promise.all(
        [1, 2, 3, 4, 5, 6, 7, 8].map((page) => {
          const clock = new FakeClock();
          return boundedPage(table, new PageRevisionStore(table, { clock: clock.read }), `Page_${page}`, clock, page);
        }),
      );
      for (const span of spans) expect(span).toBeGreaterThan(180 * DAY);
    });
  });
}
