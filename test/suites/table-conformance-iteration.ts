/** Conformance: keyIterator and entryIterator (order, pages, bounds, resume states, the page cap). */
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, IteratorItem, KeyValueTable, ObjectClosedError, TableKey } from '../../client';
import type { TableSuiteContext } from './table-conformance-context';
import { pagesOf, rejection, thrown } from './table-conformance-context';

const bytes = (...b: number[]) => new Uint8Array(b);
const hex = (k: Uint8Array) => Buffer.from(k).toString('hex');

/** Registers the iterator cases (on one table of byte keys written once, and fresh tables). */
export function iterationConformance(ctx: TableSuiteContext): void {
  describe('iterators', () => {
    const all = [bytes(0x00), bytes(0x01, 0x00), bytes(0x01, 0xff), bytes(0x41), bytes(0x7f), bytes(0x80), bytes(0x80, 0x01), bytes(0xc3, 0xa9), bytes(0xfe), bytes(0xff), bytes(0xff, 0xff)];
    const sorted = all.map(hex).sort();
    let raw: KeyValueTable<Uint8Array, string>;

    beforeAll(async () => {
      raw = await ctx.bytes();
      // Written in scrambled order, plus one key removed afterwards and one in another family.
      await raw.putAll(
        'bytes',
        [...all].reverse().map((k) => [k, hex(k)] as const),
      );
      await raw.put('bytes', bytes(0x90), 'removed');
      await raw.remove('bytes', bytes(0x90));
      await raw.put('bytes2', bytes(0x42), 'elsewhere');
    });

    it('lists keys in unsigned bytewise order with exact page sizes, never a removed key', async () => {
      const pages = await pagesOf(raw.keyIterator('bytes', { maxKeysAtOnce: 3 }));
      expect(pages.map((p) => p.items.length)).toEqual([3, 3, 3, 2]);
      expect(pages.flatMap((p) => p.items.map((k) => hex(k.key)))).toEqual(sorted);
    });

    it('orders string keys by their UTF-8 bytes', async () => {
      const table = await ctx.strings();
      await table.putAll(
        'utf8',
        ['é', 'a', 'Z', 'aa', 'B', '~', 'ab'].map((k) => [k, k] as const),
      );
      const keys = (await pagesOf(table.keyIterator('utf8'))).flatMap((p) => p.items.map((k) => k.key));
      expect(keys).toEqual(['B', 'Z', 'a', 'aa', 'ab', '~', 'é']);
    });

    it('uses 10 keys per page by default and returns entries with values and versions', async () => {
      const pages = await pagesOf(raw.entryIterator('bytes'));
      expect(pages.map((p) => p.items.length)).toEqual([10, 1]);
      const entry = pages[0].items[0];
      expect([hex(entry.key), entry.value]).toEqual(['00', '00']);
      expect((await raw.get('bytes', entry.key))?.version.equals(entry.version)).toBe(true);
      const keyPage = (await pagesOf(raw.keyIterator('bytes')))[0];
      expect(keyPage.items[0].version?.equals(entry.version)).toBe(true);
    });

    it('refuses a reverse or toInclusive that is not a boolean, and takes null options as none', async () => {
      const loose = raw as unknown as { keyIterator: (family: string, options: unknown) => AsyncIterable<IteratorItem<TableKey<Uint8Array>>> };
      for (const [options, message] of [
        [{ reverse: 'yes' }, 'reverse is "yes"; it must be true or false'],
        [{ toInclusive: 1 }, 'toInclusive is 1; it must be true or false'],
      ] as const) {
        const err = thrown(() => loose.keyIterator('bytes', options));
        expect([err.constructor, err.message]).toEqual([InvalidArgumentError, message]);
      }
      const pages = await pagesOf(loose.keyIterator('bytes', null));
      expect(pages.flatMap((p) => p.items.map((k) => hex(k.key)))).toEqual(sorted);
    });

    it('refuses a page size out of bounds and an iteration without a family, at once', () => {
      const cases: [() => unknown, string][] = [
        [() => raw.keyIterator('bytes', { maxKeysAtOnce: 0 }), 'maxKeysAtOnce is 0; the minimum is 1'],
        [() => raw.entryIterator('bytes', { maxKeysAtOnce: 10_001 }), 'maxKeysAtOnce is 10001; the maximum is 10000'],
        [() => raw.keyIterator(null as unknown as string), 'keyIterator needs a key family: only keys of one family are updated atomically or iterated in order'],
        [() => raw.entryIterator('', {}), 'key family must be null or a non-empty string'],
      ];
      for (const [call, message] of cases) {
        const err = thrown(call);
        expect([err.constructor, err.message]).toEqual([InvalidArgumentError, message]);
      }
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
      expect(await keysOf({ prefix: bytes(0x80), from: bytes(0x80, 0x00) })).toEqual(['8001']);
      expect(await keysOf({ from: bytes(0xfe), to: bytes(0x7f) })).toEqual([]);
    });

    it('resumes from any page state and reproduces the following pages exactly', async () => {
      for (const opts of [{ maxKeysAtOnce: 2 }, { maxKeysAtOnce: 3, reverse: true, from: bytes(0x01) }, { maxKeysAtOnce: 1, prefix: bytes(0x80) }]) {
        const pages = await pagesOf(raw.entryIterator('bytes', opts));
        for (let i = 0; i < pages.length; i++) {
          // Other options are ignored when resuming: the state carries them.
          const resumed = await pagesOf(raw.entryIterator('bytes', { fromState: pages[i].state, maxKeysAtOnce: 99 }));
          const view = (ps: typeof pages) => ps.map((p) => ({ keys: p.items.map((e) => hex(e.key)), state: p.state }));
          expect(view(resumed)).toEqual(view(pages.slice(i + 1)));
        }
      }
    });

    it('rejects a tampered state, or one of another iteration, with InvalidArgumentError', async () => {
      const [first] = await pagesOf(raw.keyIterator('bytes', { maxKeysAtOnce: 2 }));
      const tampered = first.state.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      const cases: [() => unknown, string][] = [
        [() => raw.keyIterator('bytes', { fromState: tampered }), 'iterator state (fromState) is malformed or was altered'],
        [() => raw.keyIterator('bytes', { fromState: 'garbage' }), 'iterator state (fromState) is malformed or was altered'],
        [() => raw.keyIterator('bytes2', { fromState: first.state }), `iterator state (fromState) belongs to another iteration (table ${raw.name}, family "bytes")`],
        [() => raw.entryIterator('bytes', { fromState: first.state }), 'iterator state (fromState) belongs to a key iterator'],
      ];
      for (const [call, message] of cases) {
        const err = thrown(call);
        expect([err.constructor, err.message]).toEqual([InvalidArgumentError, message]);
      }
      const other = await ctx.bytes();
      expect(thrown(() => other.keyIterator('bytes', { fromState: first.state }))).toBeInstanceOf(InvalidArgumentError);
    });

    it('gives the same pages each time the iterable is iterated, also twice at once', async () => {
      const iterable = raw.keyIterator('bytes', { maxKeysAtOnce: 4 });
      const keysOf = async () => (await pagesOf(iterable)).flatMap((p) => p.items.map((k) => hex(k.key)));
      expect(await keysOf()).toEqual(sorted);
      expect(await keysOf()).toEqual(sorted);
      expect(await Promise.all([keysOf(), keysOf()])).toEqual([sorted, sorted]);
    });

    it('answers calls of next() made without waiting in order, as an async generator does, and ends at return()', async () => {
      const iterator = raw.keyIterator('bytes', { maxKeysAtOnce: 4 })[Symbol.asyncIterator]();
      // Five calls at once: three pages (4 + 4 + 3 of the 11 keys), then the end, twice.
      const steps = await Promise.all([iterator.next(), iterator.next(), iterator.next(), iterator.next(), iterator.next()]);
      expect(steps.map((s) => (s.done ? 'done' : s.value.items.map((k) => hex(k.key)).join(',')))).toEqual([
        sorted.slice(0, 4).join(','),
        sorted.slice(4, 8).join(','),
        sorted.slice(8).join(','),
        'done',
        'done',
      ]);
      // return() while a page is being read: that page still comes, then nothing more.
      const other = raw.keyIterator('bytes', { maxKeysAtOnce: 4 })[Symbol.asyncIterator]();
      const [page, ended, after] = await Promise.all([other.next(), other.return!(), other.next()]);
      expect([page.done, page.done ? [] : page.value.items.length, ended.done, after.done]).toEqual([false, 4, true, true]);
    });

    it('ends an iteration whose page read failed', async () => {
      const table = await ctx.bytes();
      await table.putAll('fails', [[bytes(1), 'v']]);
      const iterator = table.keyIterator('fails', { maxKeysAtOnce: 4 })[Symbol.asyncIterator]();
      await table.close();
      expect(await rejection(iterator.next())).toBeInstanceOf(ObjectClosedError);
      expect(await iterator.next()).toEqual({ done: true, value: undefined });
    });

    it('ends a page of entries at the 2 MiB cap, never above it, and then goes on', async () => {
      const table = await ctx.strings();
      const big = 'x'.repeat(700_000);
      await table.putAll(
        'big-pages',
        Array.from({ length: 7 }, (_, i) => [`k${i}`, big] as const),
      );
      const pages = await pagesOf(table.entryIterator('big-pages', { maxKeysAtOnce: 10 }));
      // Two 700 KB entries fit in a 2 MiB page (a third would pass it).
      expect(pages.map((p) => p.items.length)).toEqual([2, 2, 2, 1]);
      expect(pages.flatMap((p) => p.items.map((e) => e.key))).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
      // Keys alone are small: one page.
      expect((await pagesOf(table.keyIterator('big-pages', { maxKeysAtOnce: 10 }))).map((p) => p.items.length)).toEqual([7]);
    });

    it('counts only the keys of a key page against the 2 MiB cap', async () => {
      const table = await ctx.strings();
      const key = (i: number) => `${String(i).padStart(4, '0')}${'k'.repeat(7996)}`;
      for (let i = 0; i < 300; i += 100)
        await table.putAll(
          'long-keys',
          Array.from({ length: 100 }, (_, j) => [key(i + j), 'v'] as const),
        );
      const pages = await pagesOf(table.keyIterator('long-keys', { maxKeysAtOnce: 1000 }));
      // 262 keys of 8,000 bytes fit in 2 MiB (2,097,152 bytes).
      expect(pages.map((p) => p.items.length)).toEqual([262, 38]);
      expect(pages.flatMap((p) => p.items.map((k) => k.key))).toEqual(Array.from({ length: 300 }, (_, i) => key(i)));
    });

    it('returns no pages for an empty family', async () => {
      expect(await pagesOf(raw.keyIterator('no-such-family'))).toEqual([]);
    });

    it('continues after keys removed between pages without returning them, and returns keys added ahead', async () => {
      const table = await ctx.strings();
      await table.putAll(
        'live',
        Array.from({ length: 6 }, (_, i) => [`k${i}`, 'v'] as const),
      );
      const it = table.keyIterator('live', { maxKeysAtOnce: 2 })[Symbol.asyncIterator]();
      const first = await it.next();
      expect((first.value as IteratorItem<TableKey<string>>).items.map((k) => k.key)).toEqual(['k0', 'k1']);
      await table.removeAll('live', [{ key: 'k2' }, { key: 'k4' }]);
      await table.putAll('live', [
        ['k0a', 'behind'],
        ['k6', 'ahead'],
      ]);
      const rest: string[] = [];
      for (let r = await it.next(); !r.done; r = await it.next()) rest.push(...r.value.items.map((k) => k.key));
      expect(rest).toEqual(['k3', 'k5', 'k6']);
    });

    it('rejects a key bound over the key limit with InvalidArgumentError', async () => {
      const table = await ctx.strings();
      const err = thrown(() => table.keyIterator('ff', { from: 'k'.repeat(8189) }));
      expect([err.constructor, err.message]).toEqual([InvalidArgumentError, 'key with its family is 8191 bytes; the maximum is 8190']);
      const serializer = await rejection(table.update('ff', [{ type: 'removeRange', prefix: 5 as unknown as string }]));
      expect([serializer.constructor, serializer.message]).toEqual([InvalidArgumentError, 'key bound cannot be serialized: the utf8 serializer takes strings, got number']);
    });
  });
}
