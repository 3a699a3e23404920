/**
 * What only the gRPC table on a real cluster has: storage paths of the segment stores (chunks),
 * coalescing of calls to a store, Execute as unary calls, writers on separate connections, and the
 * factory's lifecycle. Table semantics are the conformance suite's (test/suites/table-conformance.ts,
 * run on a cluster by client-table-conformance.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadKeyVersionError, IteratorItem, KeyValueTable, KeyValueTableFactory, KeyValueTableManager, ObjectClosedError, partitionOf, Serializers } from '../../client';
import { TestCluster } from '../harness/process';

const utf8 = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

async function pagesOf<T>(it: AsyncIterable<IteratorItem<T>>): Promise<IteratorItem<T>[]> {
  const out: IteratorItem<T>[] = [];
  for await (const page of it) out.push(page);
  return out;
}

interface CoalescerStats {
  calls: number;
  subRequests: number;
  operations: number;
}

describe('KeyValueTable over gRPC', () => {
  let cluster: TestCluster;
  let manager: KeyValueTableManager;
  let factory: KeyValueTableFactory;
  let table: KeyValueTable<string, string>;
  const statsOf = (f: KeyValueTableFactory) => (f as unknown as { coalescer: { stats: CoalescerStats } }).coalescer.stats;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('dp');
    await manager.createKeyValueTable('dp', 'kv', { partitionCount: 8 });
    factory = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress });
    table = factory.forKeyValueTable('kv', utf8);
  });
  afterAll(async () => {
    await factory?.close();
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  it('finds none of the keys of a chunk that a range removal or removals emptied, right after', async () => {
    const key = (i: number) => `k${String(i).padStart(4, '0')}`;
    for (const [family, removal] of [
      ['whole-chunk-range', 'range'],
      ['whole-chunk-removes', 'removes'],
    ] as const) {
      // Two chunks (k0000-k0127, k0128-k0199), in LevelDB (an iterator has the store apply its log first).
      await table.putAll(
        family,
        Array.from({ length: 200 }, (_, i) => [key(i), `v${i}`] as [string, string]),
      );
      expect((await pagesOf(table.keyIterator(family, { maxKeysAtOnce: 1000 })))[0].items).toHaveLength(200);
      if (removal === 'range') await table.update(family, [{ type: 'removeRange', from: key(128), to: key(999) }]);
      else
        await table.removeAll(
          family,
          Array.from({ length: 72 }, (_, i) => ({ key: key(128 + i) })),
        );
      for (let read = 0; read < 5; read++) {
        expect(await table.get(family, key(150))).toBeNull();
        expect((await table.getAll(family, [key(127), key(128), key(199)])).map((e) => e?.value ?? null)).toEqual(['v127', null, null]);
      }
    }
  });

  it('writes a family to the segment the controller lists for the partition partitionOf names', async () => {
    const spread = await Promise.all(Array.from({ length: 32 }, (_, i) => table.put(`family-${i}`, 'k', 'v')));
    expect(new Set(spread.map((v) => v.segmentId)).size).toBeGreaterThanOrEqual(4);
    const { partitions } = await manager.describeKeyValueTable('dp', 'kv');
    const segmentOf = (partition: number) => partitions.find((p) => p.partition === partition)?.segment;
    expect(spread.map((v) => v.segmentId)).toEqual(spread.map((_, i) => segmentOf(partitionOf(8, `family-${i}`))));
  });

  it('carries concurrent operations to one store in few Execute calls and merges single-key gets', async () => {
    const stats = statsOf(factory);
    await table.put('co-one', 'warm-up', 'v');
    let before = { ...stats };
    await Promise.all(Array.from({ length: 200 }, (_, i) => table.put('co-one', `k${i}`, 'v')));
    expect(stats.operations - before.operations).toBe(200);
    expect(stats.calls - before.calls).toBeLessThanOrEqual(2);
    before = { ...stats };
    const got = await Promise.all(Array.from({ length: 200 }, (_, i) => table.get('co-one', `k${i}`)));
    expect(got.every((e) => e?.value === 'v')).toBe(true);
    // All keys of one family live in one segment: the gets travel as one multi-key Get per call.
    expect(stats.subRequests - before.subRequests).toBe(stats.calls - before.calls);
    expect(stats.calls - before.calls).toBeLessThanOrEqual(2);
  });

  it('carries the small pages of concurrent iterators in the Execute calls of gets, eight at most per call, and large pages apart', async () => {
    const stats = statsOf(factory);
    await table.putAll(
      'co-pages',
      Array.from({ length: 100 }, (_, i) => [`k${String(i).padStart(3, '0')}`, `v${i}`] as const),
    );
    let before = { ...stats };
    // 32 first pages of one key and 32 gets, started together: pages are sub-requests beside the gets.
    const [pages, gets] = await Promise.all([
      Promise.all(
        Array.from({ length: 32 }, async (_, i) => {
          for await (const page of table.entryIterator('co-pages', { maxKeysAtOnce: 1, from: `k${String(i).padStart(3, '0')}` })) return page.items.map((e) => e.key);
          return [];
        }),
      ),
      Promise.all(Array.from({ length: 32 }, (_, i) => table.get('co-pages', `k${String(i + 50).padStart(3, '0')}`))),
    ]);
    expect(pages).toEqual(Array.from({ length: 32 }, (_, i) => [`k${String(i).padStart(3, '0')}`]));
    expect(gets.map((e) => e?.value)).toEqual(Array.from({ length: 32 }, (_, i) => `v${i + 50}`));
    expect(stats.operations - before.operations).toBe(64);
    // 32 pages, at most 8 to a call; the gets merged into the calls' Gets.
    expect(stats.calls - before.calls).toBeGreaterThanOrEqual(4);
    expect(stats.calls - before.calls).toBeLessThanOrEqual(8);
    // A page of more than 64 items goes over the iterator stream, not in an Execute call.
    before = { ...stats };
    const all: unknown[] = [];
    for await (const page of table.keyIterator('co-pages', { maxKeysAtOnce: 100 })) all.push(...page.items);
    expect(all).toHaveLength(100);
    expect(stats.calls - before.calls).toBe(0);
  });

  it('shares large batches queued together between the calls it may have in flight', async () => {
    const stats = statsOf(factory);
    await table.put('co-big', 'warm-up', 'v');
    const value = 'x'.repeat(1000);
    const before = { ...stats };
    // 16 batches of ~20 KB for one store, both calls free: two calls of 8 batches. One call of all 16
    // would make the store write them in one flush while the next batches wait to be staged.
    const versions = await Promise.all(
      Array.from({ length: 16 }, (_, b) =>
        table.putAll(
          'co-big',
          Array.from({ length: 20 }, (_, i) => [`b${b}-${i}`, value] as const),
        ),
      ),
    );
    expect(stats.operations - before.operations).toBe(16);
    expect(stats.calls - before.calls).toBe(2);
    expect(new Set(versions.map((v) => v[0].segmentId)).size).toBe(1);
    const got = await table.getAll(
      'co-big',
      Array.from({ length: 16 }, (_, b) => `b${b}-19`),
    );
    expect(got.every((e) => e?.value === value)).toBe(true);
  });

  it('works the same with Execute as unary calls instead of stream messages (coalescing.streams = false)', async () => {
    const unary = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress, coalescing: { streams: false } });
    try {
      const t = unary.forKeyValueTable('kv', utf8);
      const versions = await Promise.all(Array.from({ length: 50 }, (_, i) => t.put(i % 2 ? 'un-f' : null, `u${i}`, `v${i}`)));
      const read = await Promise.all(Array.from({ length: 50 }, (_, i) => table.get(i % 2 ? 'un-f' : null, `u${i}`)));
      expect(read.map((e) => e?.value)).toEqual(Array.from({ length: 50 }, (_, i) => `v${i}`));
      expect(read.every((e, i) => e!.version.equals(versions[i]))).toBe(true);
      await expect(t.putIfAbsent(null, 'u0', 'again')).rejects.toBeInstanceOf(BadKeyVersionError);
      // Iterators read small pages in the unary Execute calls then, and larger ones with unary Iterate calls.
      const pages = await pagesOf(t.entryIterator('un-f', { maxKeysAtOnce: 10 }));
      expect(pages.flatMap((p) => p.items.map((e) => e.value))).toEqual([
        'v1',
        'v11',
        'v13',
        'v15',
        'v17',
        'v19',
        'v21',
        'v23',
        'v25',
        'v27',
        'v29',
        'v3',
        'v31',
        'v33',
        'v35',
        'v37',
        'v39',
        'v41',
        'v43',
        'v45',
        'v47',
        'v49',
        'v5',
        'v7',
        'v9',
      ]);
      expect(pages).toHaveLength(3);
    } finally {
      await unary.close();
    }
  });

  it('sees the writes of every handle of a table, whatever their serializers', async () => {
    const raw = factory.forKeyValueTable('kv', { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes });
    const v = await table.put('handles', 'k', 'v');
    const entry = await raw.get('handles', Buffer.from('k'));
    expect([Buffer.from(entry!.value).toString(), entry!.version.equals(v)]).toEqual(['v', true]);
  });

  it('lets exactly one of two writers on separate connections racing with the same version win', async () => {
    // The second writer has its own factory: its requests travel in separate Execute calls.
    await using other = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress });
    const rival = other.forKeyValueTable('kv', utf8);
    for (let round = 0; round < 10; round++) {
      const v = await table.put('race', `k${round}`, 'start');
      const results = await Promise.allSettled([table.replace('race', `k${round}`, 'writer-1', v), rival.replace('race', `k${round}`, 'writer-2', v)]);
      const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(lost).toHaveLength(1);
      expect(lost[0].reason).toBeInstanceOf(BadKeyVersionError);
      const winner = results[0].status === 'fulfilled' ? 'writer-1' : 'writer-2';
      expect((await table.get('race', `k${round}`))?.value).toBe(winner);
    }
  });

  it('closes the tables of a factory with the factory, and hands out none after', async () => {
    const f = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress });
    const t = f.forKeyValueTable('kv', utf8);
    await t.put(null, 'closing', 'v');
    await f.close();
    await f.close();
    expect(await rejection(t.get(null, 'closing'))).toBeInstanceOf(ObjectClosedError);
    expect(() => f.forKeyValueTable('kv', utf8)).toThrow(ObjectClosedError);
    // Another factory's tables go on.
    expect((await table.get(null, 'closing'))?.value).toBe('v');
  });
});
