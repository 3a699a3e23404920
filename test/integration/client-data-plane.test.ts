/**
 * Data-plane conformance of KeyValueTable against a real controller and two real segment stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadKeyVersionError, InvalidArgumentError, IteratorItem, KeyValueTable, KeyValueTableFactory, KeyValueTableManager, NoSuchKeyError,
  ObjectClosedError, Serializers, TableKey, Version,
} from '../../client';
import { TestCluster } from '../harness/process';

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => {
    throw new Error('expected a rejection');
  }, (e: unknown) => e);
}

async function pagesOf<T>(it: AsyncIterable<IteratorItem<T>>): Promise<IteratorItem<T>[]> {
  const out: IteratorItem<T>[] = [];
  for await (const page of it) out.push(page);
  return out;
}

const bump = (v: Version, by: number) => Version.fromString(`${v.segmentId}.${BigInt(v.sequence) + BigInt(by)}`);

describe('KeyValueTable', () => {
  let cluster: TestCluster;
  let manager: KeyValueTableManager;
  let factory: KeyValueTableFactory;
  let table: KeyValueTable<string, string>;
  let raw: KeyValueTable<Uint8Array, string>;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('dp');
    await manager.createKeyValueTable('dp', 'kv', { partitionCount: 8 });
    factory = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress });
    table = factory.forKeyValueTable('kv', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    raw = factory.forKeyValueTable('kv', { keySerializer: Serializers.bytes, valueSerializer: Serializers.utf8 });
  });
  afterAll(async () => {
    await factory?.close();
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  /** Two families whose keys live in different segments. */
  async function familiesInTwoSegments(): Promise<[string, Version, string, Version]> {
    const first = await table.put('seg-a', 'k', '1');
    for (let i = 0; i < 64; i++) {
      const v = await table.put(`seg-b${i}`, 'k', '1');
      if (v.segmentId !== first.segmentId) return ['seg-a', first, `seg-b${i}`, v];
    }
    throw new Error('no second segment found');
  }

  describe('single-key updates', () => {
    it('put is unconditional and returns increasing versions of one segment', async () => {
      const v1 = await table.put(null, 'p1', 'a');
      const v2 = await table.put(null, 'p1', 'b');
      expect(v2.compareTo(v1)).toBeGreaterThan(0);
      const entry = await table.get(null, 'p1');
      expect(entry?.value).toBe('b');
      expect(entry?.version.equals(v2)).toBe(true);
    });

    it('putIfAbsent inserts once, then fails with BadKeyVersionError naming the key', async () => {
      await table.putIfAbsent('ins', 'k', 'first');
      const err = (await rejection(table.putIfAbsent('ins', 'k', 'second'))) as BadKeyVersionError;
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect(err.key).toBe('k');
      expect(err.message).toContain('"k"');
      expect((await table.get('ins', 'k'))?.value).toBe('first');
    });

    it('replace honours NO_VERSION, the current version, and rejects stale and altered versions', async () => {
      const v1 = await table.put('rep', 'k', '1');
      const v2 = await table.replace('rep', 'k', '2', v1);
      expect(await rejection(table.replace('rep', 'k', 'x', v1))).toBeInstanceOf(BadKeyVersionError);
      expect(await rejection(table.replace('rep', 'k', 'x', bump(v2, 1000)))).toBeInstanceOf(BadKeyVersionError);
      const v3 = await table.replace('rep', 'k', '3', Version.NO_VERSION);
      expect(await rejection(table.replace('rep', 'k', 'x', Version.NOT_EXISTS))).toBeInstanceOf(BadKeyVersionError);
      const entry = await table.get('rep', 'k');
      expect([entry?.value, entry?.version.equals(v3)]).toEqual(['3', true]);
    });

    it('rejects a well-formed version of another segment with BadKeyVersionError', async () => {
      const [, va, fb, vb] = await familiesInTwoSegments();
      // Same sequence as the current one, but another partition's segment: never a match.
      const foreign = Version.fromString(`${va.segmentId}.${vb.sequence}`);
      expect(await rejection(table.replace(fb, 'k', 'x', foreign))).toBeInstanceOf(BadKeyVersionError);
      expect(await rejection(table.remove(fb, 'k', foreign))).toBeInstanceOf(BadKeyVersionError);
      expect((await table.get(fb, 'k'))?.value).toBe('1');
    });

    it('rejects a conditional update of a missing key with NoSuchKeyError', async () => {
      const v = await table.put('nsk', 'present', '1');
      const err = (await rejection(table.replace('nsk', 'absent', 'x', v))) as NoSuchKeyError;
      expect(err).toBeInstanceOf(NoSuchKeyError);
      expect(err.code).toBe('NO_SUCH_KEY');
      expect(await rejection(table.remove('nsk', 'absent', v))).toBeInstanceOf(NoSuchKeyError);
      expect(await table.get('nsk', 'absent')).toBeNull();
    });

    it('NOT_EXISTS inserts a missing key through replace', async () => {
      const v = await table.replace('ne', 'k', 'v', Version.NOT_EXISTS);
      expect((await table.get('ne', 'k'))?.version.equals(v)).toBe(true);
    });

    it('remove is unconditional without a version (also for a missing key) and conditional with one', async () => {
      await table.remove(null, 'never-written');
      const v1 = await table.put('rm', 'k', '1');
      const v2 = await table.put('rm', 'k', '2');
      expect(await rejection(table.remove('rm', 'k', v1))).toBeInstanceOf(BadKeyVersionError);
      await table.remove('rm', 'k', v2);
      expect(await table.exists('rm', 'k')).toBe(false);
    });
  });

  describe('batches', () => {
    it('putAll is atomic within a family and returns versions in input order', async () => {
      const versions = await table.putAll('batch', [['a', '1'], ['b', '2'], ['c', '3']]);
      expect(versions).toHaveLength(3);
      expect(new Set(versions.map((v) => v.segmentId)).size).toBe(1);
      const entries = await table.getAll('batch', ['c', 'a', 'b']);
      expect(entries.map((e) => e?.value)).toEqual(['3', '1', '2']);
      expect(entries[1]?.version.equals(versions[0])).toBe(true);
    });

    it('replaceAll writes nothing when one condition fails, and names the failing key', async () => {
      const [va, vb] = await table.putAll('aon', [['a', '1'], ['b', '1']]);
      const err = (await rejection(table.replaceAll('aon', [
        { key: 'a', value: '2', version: va },
        { key: 'new', value: '2', version: Version.NOT_EXISTS },
        { key: 'b', value: '2', version: bump(vb, 7) },
      ]))) as BadKeyVersionError;
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect([err.key, err.index]).toEqual(['b', 2]);
      expect((await table.getAll('aon', ['a', 'b', 'new'])).map((e) => e?.value ?? null)).toEqual(['1', '1', null]);
    });

    it('replaceAll applies every entry when all conditions hold', async () => {
      const [va] = await table.putAll('aon2', [['a', '1']]);
      const out = await table.replaceAll('aon2', [{ key: 'a', value: '2', version: va }, { key: 'b', value: '2', version: Version.NOT_EXISTS }]);
      expect(out).toHaveLength(2);
      expect((await table.getAll('aon2', ['a', 'b'])).map((e) => e?.value)).toEqual(['2', '2']);
    });

    it('removeAll is atomic and conditional per key', async () => {
      const [va, vb] = await table.putAll('rma', [['a', '1'], ['b', '1']]);
      expect(await rejection(table.removeAll('rma', [{ key: 'a', version: va }, { key: 'b', version: bump(vb, 1) }]))).toBeInstanceOf(BadKeyVersionError);
      expect(await table.exists('rma', 'a')).toBe(true);
      await table.removeAll('rma', [{ key: 'a', version: va }, { key: 'b' }]);
      expect(await table.getAll('rma', ['a', 'b'])).toEqual([null, null]);
    });

    it('update mixes insert, put, remove and removeRange atomically', async () => {
      await table.putAll('mix', [['r01', 'x'], ['r02', 'x'], ['r03', 'x'], ['keep', 'x'], ['gone', 'x']]);
      const out = await table.update('mix', [
        { type: 'insert', key: 'new', value: 'n' },
        { type: 'put', key: 'keep', value: 'y' },
        { type: 'remove', key: 'gone' },
        { type: 'removeRange', prefix: 'r0' },
      ]);
      expect(out[0]).toBeInstanceOf(Version);
      expect(out[1]).toBeInstanceOf(Version);
      expect(out.slice(2)).toEqual([null, null]);
      const keys = (await pagesOf(table.keyIterator('mix'))).flatMap((p) => p.items.map((k) => k.key));
      expect(keys).toEqual(['keep', 'new']);
    });

    it('update writes nothing when its insert collides', async () => {
      await table.put('mix2', 'exists', '1');
      const err = (await rejection(table.update('mix2', [
        { type: 'put', key: 'a', value: '1' },
        { type: 'insert', key: 'exists', value: '2' },
      ]))) as BadKeyVersionError;
      expect([err.code, err.key, err.index]).toEqual(['BAD_KEY_VERSION', 'exists', 1]);
      expect(await table.get('mix2', 'a')).toBeNull();
    });

    it('rejects duplicate keys before sending', async () => {
      const err = await rejection(table.putAll('dup', [['a', '1'], ['a', '2']]));
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect(await table.get('dup', 'a')).toBeNull();
    });

    it('rejects what a broken custom serializer returns, single key and batch, and writes nothing', async () => {
      const broken = factory.forKeyValueTable('kv', {
        keySerializer: Serializers.utf8,
        valueSerializer: { serialize: (v: string) => (v === 'bad' ? ('not bytes' as unknown as Uint8Array) : Buffer.from(v)), deserialize: (b: Uint8Array) => Buffer.from(b).toString() },
      });
      const single = (await rejection(broken.put('ser', 'a', 'bad'))) as InvalidArgumentError;
      expect(single).toBeInstanceOf(InvalidArgumentError);
      expect(single.message).toBe('value serializer returned string, not a Uint8Array');
      const batch = (await rejection(broken.putAll('ser', [['a', 'ok'], ['b', 'bad']]))) as InvalidArgumentError;
      expect(batch).toBeInstanceOf(InvalidArgumentError);
      expect([batch.message, batch.index]).toEqual(['value serializer returned string, not a Uint8Array', 1]);
      expect(await table.get('ser', 'a')).toBeNull();
    });

    it('puts undefined through the value serializer like any value (JSON refuses it), single key as in a batch', async () => {
      const json = factory.forKeyValueTable('kv', { keySerializer: Serializers.utf8, valueSerializer: Serializers.json });
      for (const attempt of [json.put(null, 'undef', undefined), json.putIfAbsent('undef', 'k', undefined), json.putAll('undef', [['k', undefined]])]) {
        const err = (await rejection(attempt)) as InvalidArgumentError;
        expect(err).toBeInstanceOf(InvalidArgumentError);
        expect(err.message).toBe('value cannot be serialized: the json serializer cannot encode undefined');
      }
      expect(await json.get(null, 'undef')).toBeNull();
      expect(await json.get('undef', 'k')).toBeNull();
    });

    it('refuses batch arguments of the wrong shape with InvalidArgumentError naming the entry, and writes nothing', async () => {
      const loose = table as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const cases: [Promise<unknown>, string, number | undefined][] = [
        [loose.putAll('shape', 5), 'putAll takes an iterable of [key, value] pairs, got number', undefined],
        [loose.putAll('shape', [['a', '1'], 5]), 'putAll entry 1 must be a [key, value] pair, got number', 1],
        [loose.replaceAll('shape', [{ key: 'a', value: '1' }, null]), 'replaceAll entry 1 must be an object { key, value, version? }, got null', 1],
        [loose.removeAll('shape', [{ key: 'a' }, 'b']), 'removeAll entry 1 must be an object { key, version? }, got string', 1],
        [loose.update('shape', 'put'), 'update takes an iterable of modifications, got string', undefined],
        [loose.getAll('shape', 7), 'getAll takes an iterable of keys, got number', undefined],
      ];
      for (const [call, message, index] of cases) {
        const err = (await rejection(call)) as InvalidArgumentError;
        expect(err, message).toBeInstanceOf(InvalidArgumentError);
        expect([err.message, err.index]).toEqual([message, index]);
      }
      expect(await table.get('shape', 'a')).toBeNull();
    });

    it('resolves an empty batch to []', async () => {
      expect(await table.putAll('empty', [])).toEqual([]);
      expect(await table.replaceAll('empty', [])).toEqual([]);
    });
  });

  describe('reads', () => {
    it('finds none of the keys of a chunk that a range removal or removals emptied, right after', async () => {
      const key = (i: number) => `k${String(i).padStart(4, '0')}`;
      for (const [family, removal] of [['whole-chunk-range', 'range'], ['whole-chunk-removes', 'removes']] as const) {
        // Two chunks (k0000-k0127, k0128-k0199), in LevelDB (an iterator has the store apply its log first).
        await table.putAll(family, Array.from({ length: 200 }, (_, i) => [key(i), `v${i}`] as [string, string]));
        expect((await pagesOf(table.keyIterator(family, { maxKeysAtOnce: 1000 })))[0].items).toHaveLength(200);
        if (removal === 'range') await table.update(family, [{ type: 'removeRange', from: key(128), to: key(999) }]);
        else await table.removeAll(family, Array.from({ length: 72 }, (_, i) => ({ key: key(128 + i) })));
        for (let read = 0; read < 5; read++) {
          expect(await table.get(family, key(150))).toBeNull();
          expect((await table.getAll(family, [key(127), key(128), key(199)])).map((e) => e?.value ?? null)).toEqual(['v127', null, null]);
        }
      }
    });

    it('getAll keeps input order and nulls across partitions', async () => {
      const keys = Array.from({ length: 40 }, (_, i) => `spread-${i}`);
      for (let i = 0; i < keys.length; i += 2) await table.put(null, keys[i], `v${i}`);
      const asked = [...keys].reverse();
      const entries = await table.getAll(null, asked);
      expect(entries.map((e) => e?.value ?? null)).toEqual(asked.map((k) => (Number(k.split('-')[1]) % 2 === 0 ? `v${k.split('-')[1]}` : null)));
      expect(new Set(entries.filter((e) => e).map((e) => e!.version.segmentId)).size).toBeGreaterThan(1);
    });

    it('keeps the keys of one family in one segment and spreads families over partitions', async () => {
      const versions = await Promise.all(Array.from({ length: 20 }, (_, i) => table.put('one-family', `k${i}`, 'v')));
      expect(new Set(versions.map((v) => v.segmentId)).size).toBe(1);
      const spread = await Promise.all(Array.from({ length: 32 }, (_, i) => table.put(`family-${i}`, 'k', 'v')));
      expect(new Set(spread.map((v) => v.segmentId)).size).toBeGreaterThanOrEqual(4);
    });

    it('serves many concurrent operations correctly (coalesced)', async () => {
      const n = 300;
      const versions = await Promise.all(Array.from({ length: n }, (_, i) => table.put(i % 3 === 0 ? null : `co-${i % 7}`, `c${i}`, `v${i}`)));
      expect(versions).toHaveLength(n);
      const reads = await Promise.all(Array.from({ length: n }, (_, i) => table.get(i % 3 === 0 ? null : `co-${i % 7}`, `c${i}`)));
      expect(reads.map((e) => e?.value)).toEqual(Array.from({ length: n }, (_, i) => `v${i}`));
      expect(reads.every((e, i) => e!.version.equals(versions[i]))).toBe(true);
    });
    it('carries concurrent operations to one store in few Execute calls and merges single-key gets', async () => {
      const stats = (factory as unknown as { coalescer: { stats: { calls: number; subRequests: number; operations: number } } }).coalescer.stats;
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

    it('shares large batches queued together between the calls it may have in flight', async () => {
      const stats = (factory as unknown as { coalescer: { stats: { calls: number; subRequests: number; operations: number } } }).coalescer.stats;
      await table.put('co-big', 'warm-up', 'v');
      const value = 'x'.repeat(1000);
      const before = { ...stats };
      // 16 batches of ~20 KB for one store, both calls free: two calls of 8 batches. One call of all 16
      // would make the store write them in one flush while the next batches wait to be staged.
      const versions = await Promise.all(Array.from({ length: 16 }, (_, b) => table.putAll('co-big', Array.from({ length: 20 }, (_, i) => [`b${b}-${i}`, value] as const))));
      expect(stats.operations - before.operations).toBe(16);
      expect(stats.calls - before.calls).toBe(2);
      expect(new Set(versions.map((v) => v[0].segmentId)).size).toBe(1);
      const got = await table.getAll('co-big', Array.from({ length: 16 }, (_, b) => `b${b}-19`));
      expect(got.every((e) => e?.value === value)).toBe(true);
    });

    it('works the same with Execute as unary calls instead of stream messages (coalescing.streams = false)', async () => {
      const unary = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress, coalescing: { streams: false } });
      try {
        const t = unary.forKeyValueTable('kv', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
        const versions = await Promise.all(Array.from({ length: 50 }, (_, i) => t.put(i % 2 ? 'un-f' : null, `u${i}`, `v${i}`)));
        const read = await Promise.all(Array.from({ length: 50 }, (_, i) => table.get(i % 2 ? 'un-f' : null, `u${i}`)));
        expect(read.map((e) => e?.value)).toEqual(Array.from({ length: 50 }, (_, i) => `v${i}`));
        expect(read.every((e, i) => e!.version.equals(versions[i]))).toBe(true);
        await expect(t.putIfAbsent(null, 'u0', 'again')).rejects.toBeInstanceOf(BadKeyVersionError);
        // Iterators read pages with unary Iterate calls then.
        const pages = await pagesOf(t.entryIterator('un-f', { maxKeysAtOnce: 10 }));
        expect(pages.flatMap((p) => p.items.map((e) => e.value))).toEqual(['v1', 'v11', 'v13', 'v15', 'v17', 'v19', 'v21', 'v23', 'v25', 'v27', 'v29', 'v3', 'v31', 'v33', 'v35', 'v37', 'v39', 'v41', 'v43', 'v45', 'v47', 'v49', 'v5', 'v7', 'v9']);
        expect(pages).toHaveLength(3);
      } finally {
        await unary.close();
      }
    });
  });

  describe('iterators', () => {
    const bytes = (...b: number[]) => new Uint8Array(b);
    const hex = (k: Uint8Array) => Buffer.from(k).toString('hex');
    const all = [bytes(0x00), bytes(0x01, 0x00), bytes(0x01, 0xff), bytes(0x41), bytes(0x7f), bytes(0x80), bytes(0x80, 0x01), bytes(0xc3, 0xa9), bytes(0xfe), bytes(0xff), bytes(0xff, 0xff)];
    const sorted = all.map(hex).sort();

    beforeAll(async () => {
      // Written in scrambled order, plus one key removed afterwards.
      await raw.putAll('bytes', [...all].reverse().map((k) => [k, hex(k)] as const));
      await raw.put('bytes', bytes(0x90), 'removed');
      await raw.remove('bytes', bytes(0x90));
    });

    it('lists keys in unsigned bytewise order with exact page sizes, never a removed key', async () => {
      const pages = await pagesOf(raw.keyIterator('bytes', { maxKeysAtOnce: 3 }));
      expect(pages.map((p) => p.items.length)).toEqual([3, 3, 3, 2]);
      expect(pages.flatMap((p) => p.items.map((k) => hex(k.key)))).toEqual(sorted);
    });

    it('uses 10 keys per page by default and returns entries with values and versions', async () => {
      const pages = await pagesOf(raw.entryIterator('bytes'));
      expect(pages.map((p) => p.items.length)).toEqual([10, 1]);
      const entry = pages[0].items[0];
      expect(entry.value).toBe('00');
      expect((await raw.get('bytes', entry.key))?.version.equals(entry.version)).toBe(true);
    });

    it('refuses a reverse or toInclusive that is not a boolean, and takes null options as none', async () => {
      const loose = raw as unknown as { keyIterator: (family: string, options: unknown) => AsyncIterable<IteratorItem<TableKey<Uint8Array>>> };
      for (const [options, message] of [[{ reverse: 'yes' }, 'reverse is "yes"; it must be true or false'], [{ toInclusive: 1 }, 'toInclusive is 1; it must be true or false']] as const) {
        const err = (await rejection(Promise.resolve().then(() => pagesOf(loose.keyIterator('bytes', options))))) as InvalidArgumentError;
        expect(err).toBeInstanceOf(InvalidArgumentError);
        expect(err.message).toBe(message);
      }
      const pages = await pagesOf(loose.keyIterator('bytes', null));
      expect(pages.flatMap((p) => p.items.map((k) => hex(k.key)))).toEqual(sorted);
    });

    it('iterates in reverse', async () => {
      const pages = await pagesOf(raw.keyIterator('bytes', { maxKeysAtOnce: 4, reverse: true }));
      expect(pages.flatMap((p) => p.items.map((k) => hex(k.key)))).toEqual([...sorted].reverse());
      expect(pages.map((p) => p.items.length)).toEqual([4, 4, 3]);
    });

    it('honours prefix and from / to bounds', async () => {
      const keysOf = async (opts: object) => (await pagesOf(raw.keyIterator('bytes', opts))).flatMap((p) => p.items.map((k) => hex(k.key)));
      expect(await keysOf({ prefix: bytes(0x01) })).toEqual(['0100', '01ff']);
      expect(await keysOf({ prefix: bytes(0xff), reverse: true })).toEqual(['ffff', 'ff']);
      expect(await keysOf({ from: bytes(0x7f), to: bytes(0xfe) })).toEqual(['7f', '80', '8001', 'c3a9']);
      expect(await keysOf({ from: bytes(0x7f), to: bytes(0xfe), toInclusive: true })).toEqual(['7f', '80', '8001', 'c3a9', 'fe']);
      expect(await keysOf({ from: bytes(0x7f), to: bytes(0xfe), reverse: true, maxKeysAtOnce: 2 })).toEqual(['c3a9', '8001', '80', '7f']);
    });

    it('resumes from any page state and reproduces the following pages exactly', async () => {
      for (const opts of [{ maxKeysAtOnce: 2 }, { maxKeysAtOnce: 3, reverse: true, from: bytes(0x01) }]) {
        const pages = await pagesOf(raw.entryIterator('bytes', opts));
        for (let i = 0; i < pages.length; i++) {
          // Other options are ignored when resuming: the state carries them.
          const resumed = await pagesOf(raw.entryIterator('bytes', { fromState: pages[i].state, maxKeysAtOnce: 99 }));
          const view = (ps: typeof pages) => ps.map((p) => ({ keys: p.items.map((e) => hex(e.key)), state: p.state }));
          expect(view(resumed)).toEqual(view(pages.slice(i + 1)));
        }
      }
    });

    it('rejects a tampered state with InvalidArgumentError', async () => {
      const [first] = await pagesOf(raw.keyIterator('bytes', { maxKeysAtOnce: 2 }));
      const tampered = first.state.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      expect(() => raw.keyIterator('bytes', { fromState: tampered })).toThrow(InvalidArgumentError);
    });

    it('gives the same pages each time the iterable is iterated, also twice at once', async () => {
      const iterable = raw.keyIterator('bytes', { maxKeysAtOnce: 4 });
      const keysOf = async () => (await pagesOf(iterable)).flatMap((p) => p.items.map((k) => hex(k.key)));
      expect(await keysOf()).toEqual(sorted);
      expect(await keysOf()).toEqual(sorted);
      expect(await Promise.all([keysOf(), keysOf()])).toEqual([sorted, sorted]);
    });

    it('ends a page at the 2 MiB cap, never above it, and then goes on', async () => {
      const big = 'x'.repeat(700_000);
      await table.putAll('big-pages', Array.from({ length: 7 }, (_, i) => [`k${i}`, big] as const));
      const pages = await pagesOf(table.entryIterator('big-pages', { maxKeysAtOnce: 10 }));
      // The store fits two 700 KB entries in a 2 MiB page (a third would pass it).
      expect(pages.map((p) => p.items.length)).toEqual([2, 2, 2, 1]);
      expect(pages.flatMap((p) => p.items.map((e) => e.key))).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
    });

    it('returns no pages for an empty family', async () => {
      expect(await pagesOf(table.keyIterator('no-such-family'))).toEqual([]);
    });

    it('continues after keys removed between pages without returning them', async () => {
      await table.putAll('live', Array.from({ length: 6 }, (_, i) => [`k${i}`, 'v'] as const));
      const it = table.keyIterator('live', { maxKeysAtOnce: 2 })[Symbol.asyncIterator]();
      const first = await it.next();
      expect((first.value as IteratorItem<TableKey<string>>).items.map((k) => k.key)).toEqual(['k0', 'k1']);
      await table.removeAll('live', [{ key: 'k2' }, { key: 'k4' }]);
      const rest: string[] = [];
      for (let r = await it.next(); !r.done; r = await it.next()) rest.push(...r.value.items.map((k) => k.key));
      expect(rest).toEqual(['k3', 'k5']);
    });
  });

  it('lets exactly one of two writers racing with the same version win', async () => {
    // The second writer has its own factory: its requests travel in separate Execute calls.
    await using other = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress });
    const rival = other.forKeyValueTable('kv', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    for (let round = 0; round < 10; round++) {
      const v = await table.put('race', `k${round}`, 'start');
      const writers = round % 2 === 0 ? [table, rival] : [table, table];
      const results = await Promise.allSettled([
        writers[0].replace('race', `k${round}`, 'writer-1', v),
        writers[1].replace('race', `k${round}`, 'writer-2', v),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect(lost[0].reason).toBeInstanceOf(BadKeyVersionError);
      const winner = results[0].status === 'fulfilled' ? 'writer-1' : 'writer-2';
      expect((await table.get('race', `k${round}`))?.value).toBe(winner);
    }
  });

  it('expires an entry with ttlMs while keeping the others', async () => {
    await table.put('ttl', 'short', 'v', { ttlMs: 300 });
    await table.put('ttl', 'forever', 'v');
    // replace takes a TTL too: the entry it replaces expires as well.
    await table.replace('ttl', 'replaced', 'w', await table.put('ttl', 'replaced', 'v'), { ttlMs: 300 });
    let gone = false;
    // Bounded wait: expiry is honoured on read by the store's clock.
    for (let i = 0; i < 100 && !gone; i++) {
      await new Promise((r) => setTimeout(r, 100));
      gone = (await table.get('ttl', 'short')) === null && (await table.get('ttl', 'replaced')) === null;
    }
    expect(gone).toBe(true);
    expect(await table.exists('ttl', 'forever')).toBe(true);
  });

  it('fails with ObjectClosedError after close, and close twice is fine', async () => {
    const f = KeyValueTableFactory.withScope('dp', { controller: cluster.controllerAddress });
    const t = f.forKeyValueTable('kv', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    await t.put(null, 'closing', 'v');
    await t.close();
    await t.close();
    expect(await rejection(t.get(null, 'closing'))).toBeInstanceOf(ObjectClosedError);
    expect(await rejection(t.put(null, 'closing', 'w'))).toBeInstanceOf(ObjectClosedError);
    const t2 = f.forKeyValueTable('kv', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    await f.close();
    await f.close();
    expect(await rejection(t2.get(null, 'closing'))).toBeInstanceOf(ObjectClosedError);
    expect(() => f.forKeyValueTable('kv', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 })).toThrow(ObjectClosedError);
  });
});
