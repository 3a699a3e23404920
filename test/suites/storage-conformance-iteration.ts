/** Storage conformance, iteration: order, bounds, pages, resume, removed and expired keys. */
import { describe, expect, it } from 'vitest';
import type { IterateResponse } from '../../proto/messages';
import type { IterateInput } from '../../segmentstore/storage/read/read-validation';
import type { SuiteContext } from './storage-conformance-context';
import { b, put } from './storage-conformance-context';

const keyOf = (e: { key: Uint8Array }) => Buffer.from(e.key);

/** Reads every page from the start; returns the pages' keys. */
async function allPages(ctx: SuiteContext, req: IterateInput): Promise<{ pages: Buffer[][]; responses: IterateResponse[] }> {
  const pages: Buffer[][] = [];
  const responses: IterateResponse[] = [];
  let after: Buffer | undefined;
  for (let n = 0; n < 1000; n++) {
    const res = await ctx.store().iterate({ ...req, hasAfter: after !== undefined, after });
    responses.push(res);
    pages.push(res.items.map(keyOf));
    if (res.done) break;
    after = keyOf(res.items[res.items.length - 1]);
  }
  return { pages, responses };
}

function modelRange(keys: Buffer[], o: { prefix?: Buffer; from?: Buffer; to?: Buffer; toInclusive?: boolean; reverse?: boolean }): Buffer[] {
  const out = [...keys].sort(Buffer.compare).filter((k) => {
    if (o.prefix && !k.subarray(0, o.prefix.length).equals(o.prefix)) return false;
    if (o.from && Buffer.compare(k, o.from) < 0) return false;
    if (o.to) {
      const c = Buffer.compare(k, o.to);
      if (c > 0 || (c === 0 && !o.toInclusive)) return false;
    }
    return true;
  });
  return o.reverse ? out.reverse() : out;
}

/** Registers the iteration tests. */
export function iterationConformance(ctx: SuiteContext): void {
  describe('iteration', () => {
    it('orders keys by unsigned bytes within one family, apart from other families', async () => {
      const id = await ctx.segment();
      const keys = [[0xff], [0x80], [0x7f], [0x00], [0x01], [0xff, 0x00], [0x7f, 0xff]].map((k) => Buffer.from(k));
      for (const k of keys) await put(ctx.store(), id, 'f', k, 'v');
      await put(ctx.store(), id, 'f2', Buffer.from([0x10]), 'other family');
      await put(ctx.store(), id, '', Buffer.from([0x20]), 'no family');
      const forward = await ctx.store().iterate({ segmentId: id, family: 'f', maxItems: 100 });
      expect(forward.items.map((e) => keyOf(e).toString('hex'))).toEqual(['00', '01', '7f', '7fff', '80', 'ff', 'ff00']);
      expect(forward.done).toBe(true);
      const reverse = await ctx.store().iterate({ segmentId: id, family: 'f', maxItems: 100, reverse: true });
      expect(reverse.items.map((e) => keyOf(e).toString('hex'))).toEqual(['ff00', 'ff', '80', '7fff', '7f', '01', '00']);
      const none = await ctx.store().iterate({ segmentId: id, family: '', maxItems: 100 });
      expect(none.items.map((e) => keyOf(e).toString('hex'))).toEqual(['20']);
    });

    it('returns exactly maxItems per page (default 10) and done only when nothing follows', async () => {
      const id = await ctx.segment();
      const res = await ctx.store().update({ segmentId: id, modifications: Array.from({ length: 20 }, (_, i) => ({ family: 'f', key: b(`k${String(i).padStart(2, '0')}`), value: b(`v${i}`) })) });
      const { responses } = await allPages(ctx, { segmentId: id, family: 'f', includeValues: true });
      expect(responses.map((r) => [r.items.length, r.done])).toEqual([
        [10, false],
        [10, true],
      ]);
      expect(responses[0].items[3]).toMatchObject({ found: true, sequence: res.sequences[3] });
      expect(Buffer.from(responses[0].items[3].value).toString()).toBe('v3');
      const keysOnly = await ctx.store().iterate({ segmentId: id, family: 'f', maxItems: 1 });
      expect(keysOnly.items[0].value.length).toBe(0);
    });

    it('honours prefix, from, to, toInclusive and reverse, and resuming reproduces the pages exactly', async () => {
      const id = await ctx.segment();
      const keys = ['a', 'a0', 'a1', 'a10', 'a2', 'ab', 'b', 'b0', 'ba', 'c', 'c0', 'c1', 'd'].map(b);
      keys.push(Buffer.from([0x61, 0xff]), Buffer.from([0x61, 0xff, 0xff]), Buffer.from([0x62, 0x80]));
      await ctx.store().update({ segmentId: id, modifications: keys.map((key) => ({ family: 'f', key, value: key })) });
      const cases = [
        {},
        { prefix: b('a') },
        { prefix: Buffer.from([0x61, 0xff]) },
        { from: b('a1'), to: b('b0') },
        { from: b('a1'), to: b('b0'), toInclusive: true },
        { prefix: b('b'), from: b('b0') },
        { from: b('c'), to: b('a') },
      ];
      for (const base of cases) {
        for (const reverse of [false, true]) {
          const o = { ...base, reverse };
          const req = { segmentId: id, family: 'f', maxItems: 3, ...o };
          const { pages } = await allPages(ctx, req);
          const want = modelRange(keys, o);
          expect(
            pages.flat().map((k) => k.toString('hex')),
            JSON.stringify(o),
          ).toEqual(want.map((k) => k.toString('hex')));
          for (const page of pages.slice(0, -1)) expect(page).toHaveLength(3);
          if (pages.length > 1) {
            const again = await ctx.store().iterate({ ...req, hasAfter: true, after: pages[0][2] });
            expect(again.items.map(keyOf)).toEqual(pages[1]);
          }
        }
      }
    });

    it('never returns removed keys', async () => {
      const id = await ctx.segment();
      await ctx.store().update({ segmentId: id, modifications: ['a', 'b', 'c', 'd'].map((k) => ({ family: 'f', key: b(k), value: b(k) })) });
      await ctx.store().update({ segmentId: id, modifications: [{ type: 'REMOVE', family: 'f', key: b('b') }] });
      await ctx.store().update({ segmentId: id, modifications: [{ type: 'REMOVE_RANGE', family: 'f', rangeFrom: b('d') }] });
      const { pages } = await allPages(ctx, { segmentId: id, family: 'f', maxItems: 1 });
      expect(pages.flat().map(String)).toEqual(['a', 'c']);
    });

    it('ends a page at the 2 MiB byte cap before maxItems', async () => {
      const id = await ctx.segment();
      const value = Buffer.alloc(600_000, 7);
      await ctx.store().update({ segmentId: id, modifications: ['a', 'b', 'c', 'd', 'e'].map((k) => ({ family: 'f', key: b(k), value })) });
      const { responses } = await allPages(ctx, { segmentId: id, family: 'f', maxItems: 10, includeValues: true });
      expect(responses.map((r) => r.items.length)).toEqual([3, 2]);
      expect(responses[0].done).toBe(false);
      expect(responses[0].items[2].value.length).toBe(600_000);
    });
  });
}
