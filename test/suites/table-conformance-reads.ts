/** Conformance: reads, routing, scans, expiry and closing. */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, NoSuchKeyError, ObjectClosedError, partitionOf, ScannedEntry } from '../../client';
import type { TableSuiteContext } from './table-conformance-context';
import { pagesOf, rejection, thrown, utf8 } from './table-conformance-context';

/** Registers the cases of reads, routing, scans, expiry and closing. */
export function readsConformance(ctx: TableSuiteContext): void {
  describe('reads', () => {
    it('gets an entry or null, and says whether a key exists', async () => {
      const table = await ctx.strings();
      const v = await table.put('g', 'k', 'v');
      const entry = await table.get('g', 'k');
      expect([entry?.key, entry?.value, entry?.version.equals(v)]).toEqual(['k', 'v', true]);
      expect(await table.get('g', 'missing')).toBeNull();
      expect([await table.exists('g', 'k'), await table.exists('g', 'missing'), await table.exists(null, 'k')]).toEqual([true, false, false]);
    });

    it('keeps input order and nulls in getAll across partitions', async () => {
      const table = await ctx.strings();
      const keys = Array.from({ length: 40 }, (_, i) => `spread-${i}`);
      for (let i = 0; i < keys.length; i += 2) await table.put(null, keys[i], `v${i}`);
      const asked = [...keys].reverse();
      const entries = await table.getAll(null, asked);
      expect(entries.map((e) => e?.value ?? null)).toEqual(asked.map((k) => (Number(k.split('-')[1]) % 2 === 0 ? `v${k.split('-')[1]}` : null)));
      expect(entries.map((e) => e?.key ?? null)).toEqual(asked.map((k, i) => (entries[i] ? k : null)));
      expect(new Set(entries.filter((e) => e).map((e) => e!.version.segmentId)).size).toBeGreaterThan(1);
      expect((await table.getAll('fam', ['x', 'y'])).map((e) => e?.value ?? null)).toEqual([null, null]);
    });

    it('routes keys to partitions by the MurmurHash3 of the family, else of the key, as partitionOf says', async () => {
      const table = await ctx.strings();
      const n = ctx.target().partitionCount;
      const segmentOf = new Map<number, string>();
      const place = (partition: number, segmentId: string) => {
        expect(segmentOf.get(partition) ?? segmentId, `partition ${partition}`).toBe(segmentId);
        segmentOf.set(partition, segmentId);
      };
      for (let i = 0; i < 48; i++) {
        place(partitionOf(n, null, Buffer.from(`route-${i}`)), (await table.put(null, `route-${i}`, 'v')).segmentId);
        place(partitionOf(n, `family-${i}`), (await table.put(`family-${i}`, `k${i}`, 'v')).segmentId);
      }
      // One segment per partition: as many segments as partitions reached, all different.
      expect(new Set(segmentOf.values()).size).toBe(segmentOf.size);
      expect(segmentOf.size).toBeGreaterThanOrEqual(Math.min(n, 4));
    });

    it('keeps the keys of one family in one segment', async () => {
      const table = await ctx.strings();
      const versions = await Promise.all(Array.from({ length: 20 }, (_, i) => table.put('one-family', `k${i}`, 'v')));
      expect(new Set(versions.map((v) => v.segmentId)).size).toBe(1);
    });

    it('serves many concurrent operations correctly', async () => {
      const table = await ctx.strings();
      const n = 300;
      const familyOf = (i: number) => (i % 3 === 0 ? null : `co-${i % 7}`);
      const versions = await Promise.all(Array.from({ length: n }, (_, i) => table.put(familyOf(i), `c${i}`, `v${i}`)));
      const reads = await Promise.all(Array.from({ length: n }, (_, i) => table.get(familyOf(i), `c${i}`)));
      expect(reads.map((e) => e?.value)).toEqual(Array.from({ length: n }, (_, i) => `v${i}`));
      expect(reads.every((e, i) => e!.version.equals(versions[i]))).toBe(true);
    });
  });

  describe('scanEntries', () => {
    it('lists every entry of every family and the family-less keys once, partition by partition', async () => {
      const table = await ctx.strings();
      const written = new Map<string, string>();
      for (let i = 0; i < 30; i++) written.set(`none/n${i}`, (await table.put(null, `n${i}`, `v${i}`)).toString());
      for (let f = 0; f < 6; f++) {
        const versions = await table.putAll(
          `fam${f}`,
          Array.from({ length: 5 }, (_, i) => [`k${i}`, `f${f}v${i}`] as const),
        );
        versions.forEach((v, i) => written.set(`fam${f}/k${i}`, v.toString()));
      }
      await table.remove('fam0', 'k0');
      written.delete('fam0/k0');
      const pages = await pagesOf(table.scanEntries({ maxKeysAtOnce: 4 }));
      const seen = pages.flatMap((p) => p.items.map((e: ScannedEntry<string, string>) => [`${e.family ?? 'none'}/${e.key}`, e.version.toString()] as const));
      expect(new Map(seen)).toEqual(written);
      expect(seen).toHaveLength(written.size);
      for (const page of pages) {
        expect(page.items.length).toBeLessThanOrEqual(4);
        // A page never spans two partitions.
        expect(new Set(page.items.map((e) => e.version.segmentId)).size).toBe(1);
      }
      const entry = pages.flatMap((p) => p.items).find((e) => e.family === 'fam3' && e.key === 'k2');
      expect(entry?.value).toBe('f3v2');
    });

    it('uses 10 items per page by default and lists nothing of an empty table', async () => {
      const table = await ctx.strings();
      expect(await pagesOf(table.scanEntries())).toEqual([]);
      await table.putAll(
        'f',
        Array.from({ length: 25 }, (_, i) => [`k${String(i).padStart(2, '0')}`, 'v'] as const),
      );
      const pages = await pagesOf(table.scanEntries());
      expect(pages.map((p) => p.items.length)).toEqual([10, 10, 5]);
      expect(pages.flatMap((p) => p.items.map((e) => e.key))).toEqual(Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, '0')}`));
    });

    it('refuses a page size out of bounds with InvalidArgumentError', async () => {
      const table = await ctx.strings();
      for (const [size, message] of [
        [0, 'maxKeysAtOnce is 0; the minimum is 1'],
        [10_001, 'maxKeysAtOnce is 10001; the maximum is 10000'],
        [1.5, 'maxKeysAtOnce must be an integer, got 1.5'],
      ] as const) {
        const err = await rejection(pagesOf(table.scanEntries({ maxKeysAtOnce: size })));
        expect([err.constructor, err.message]).toEqual([InvalidArgumentError, message]);
      }
    });
  });

  describe('expiry', () => {
    it('expires entries by their ttlMs, on every path that writes one, and keeps the others', async () => {
      const table = await ctx.strings();
      const ttl = { ttlMs: 200 };
      await table.put('ttl', 'put', 'v', ttl);
      await table.put(null, 'family-less', 'v', ttl);
      await table.putIfAbsent('ttl', 'inserted', 'v', ttl);
      await table.replace('ttl', 'replaced', 'w', await table.put('ttl', 'replaced', 'v'), ttl);
      await table.putAll('ttl', [['batch', 'v']], ttl);
      await table.update('ttl', [
        { type: 'insert', key: 'insert', value: 'v', ttlMs: 200 },
        { type: 'put', key: 'update', value: 'v', ttlMs: 200 },
      ]);
      await table.put('ttl', 'forever', 'v');
      await table.put('ttl', 'later', 'v', { ttlMs: 3_600_000 });
      await ctx.target().advance(400);
      const keys = ['put', 'inserted', 'replaced', 'batch', 'insert', 'update', 'forever', 'later'];
      expect((await table.getAll('ttl', keys)).map((e) => e?.value ?? null)).toEqual([null, null, null, null, null, null, 'v', 'v']);
      expect(await table.get(null, 'family-less')).toBeNull();
      expect((await pagesOf(table.keyIterator('ttl'))).flatMap((p) => p.items.map((k) => k.key))).toEqual(['forever', 'later']);
      expect((await pagesOf(table.scanEntries())).flatMap((p) => p.items.map((e) => e.key)).sort()).toEqual(['forever', 'later']);
    });

    it('treats an expired key as absent for conditions', async () => {
      const table = await ctx.strings();
      const v = await table.put('ttl', 'k', 'old', { ttlMs: 200 });
      await ctx.target().advance(400);
      expect(await rejection(table.replace('ttl', 'k', 'x', v))).toBeInstanceOf(NoSuchKeyError);
      await table.putIfAbsent('ttl', 'k', 'new');
      expect((await table.get('ttl', 'k'))?.value).toBe('new');
    });

    it('refuses a ttlMs that is not a positive integer with InvalidArgumentError', async () => {
      const table = await ctx.strings();
      const cases = [
        [0, 'ttlMs is 0; the minimum is 1'],
        [-5, 'ttlMs is -5; the minimum is 1'],
        [1.5, 'ttlMs must be an integer number of milliseconds, got 1.5'],
      ] as const;
      for (const [ttlMs, message] of cases) {
        const err = await rejection(table.put('ttl', 'k', 'v', { ttlMs }));
        expect([err.constructor, err.message]).toEqual([InvalidArgumentError, message]);
      }
      const batch = await rejection(
        table.update('ttl', [
          { type: 'put', key: 'a', value: 'v' },
          { type: 'insert', key: 'b', value: 'v', ttlMs: 0 },
        ]),
      );
      expect([batch.message, batch.index]).toEqual(['ttlMs is 0; the minimum is 1', 1]);
      expect(await table.getAll('ttl', ['k', 'a'])).toEqual([null, null]);
    });
  });

  describe('close', () => {
    it('fails every call with ObjectClosedError after close, and closes twice without error', async () => {
      const table = await ctx.strings();
      await table.put('c', 'k', 'v');
      await table.close();
      await table.close();
      const calls: (() => Promise<unknown>)[] = [
        () => table.get('c', 'k'),
        () => table.put('c', 'k', 'w'),
        () => table.putAll('c', [['k', 'w']]),
        () => table.remove('c', 'k'),
        () => table.getAll(null, ['k']),
        () => pagesOf(table.scanEntries()),
      ];
      for (const call of calls) expect(await rejection(call())).toBeInstanceOf(ObjectClosedError);
      expect(thrown(() => table.keyIterator('c'))).toBeInstanceOf(ObjectClosedError);
    });

    it('closes on Symbol.asyncDispose', async () => {
      const outer = await ctx.strings();
      {
        await using table = outer;
        await table.put(null, 'k', 'v');
      }
      expect(await rejection(outer.get(null, 'k'))).toBeInstanceOf(ObjectClosedError);
    });

    it('ends an iteration with ObjectClosedError when the table closes between pages', async () => {
      const table = await ctx.target().table(utf8);
      await table.putAll(
        'c',
        Array.from({ length: 6 }, (_, i) => [`k${i}`, 'v'] as const),
      );
      const pages = table.entryIterator('c', { maxKeysAtOnce: 2 })[Symbol.asyncIterator]();
      expect((await pages.next()).value?.items).toHaveLength(2);
      await table.close();
      expect(await rejection(pages.next())).toBeInstanceOf(ObjectClosedError);
    });
  });
}
