/** Conformance: atomic batches of one family (putAll, replaceAll, removeAll, update). */
import { describe, expect, it } from 'vitest';
import { BadKeyVersionError, InvalidArgumentError, NoSuchKeyError, Serializers, Version } from '../../client';
import type { TableSuiteContext } from './table-conformance-context';
import { bump, conditionMessage, pagesOf, rejection } from './table-conformance-context';

/** Registers the batch cases. */
export function batchesConformance(ctx: TableSuiteContext): void {
  describe('batches', () => {
    it('puts all entries of a family atomically and returns their versions in input order', async () => {
      const table = await ctx.strings();
      const versions = await table.putAll('batch', [
        ['c', '3'],
        ['a', '1'],
        ['b', '2'],
      ]);
      expect(versions).toHaveLength(3);
      expect(new Set(versions.map((v) => v.segmentId)).size).toBe(1);
      expect(versions[1].compareTo(versions[0])).toBeGreaterThan(0);
      expect(versions[2].compareTo(versions[1])).toBeGreaterThan(0);
      const entries = await table.getAll('batch', ['c', 'a', 'b']);
      expect(entries.map((e) => e?.value)).toEqual(['3', '1', '2']);
      expect(entries.every((e, i) => e!.version.equals(versions[i]))).toBe(true);
    });

    it('writes nothing of a replaceAll when one condition fails, and names the failing key', async () => {
      const table = await ctx.strings();
      const [va, vb] = await table.putAll('aon', [
        ['a', '1'],
        ['b', '1'],
      ]);
      const err = await rejection(
        table.replaceAll('aon', [
          { key: 'a', value: '2', version: va },
          { key: 'new', value: '2', version: Version.NOT_EXISTS },
          { key: 'b', value: '2', version: bump(vb, 7) },
        ]),
      );
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect([err.key, err.index]).toEqual(['b', 2]);
      expect(err.message).toBe(conditionMessage(table, `modifications[2]: the key's version is ${vb}, not ${bump(vb, 7)}`, 'b'));
      expect((await table.getAll('aon', ['a', 'b', 'new'])).map((e) => e?.value ?? null)).toEqual(['1', '1', null]);
    });

    it('applies every entry of a replaceAll when all conditions hold', async () => {
      const table = await ctx.strings();
      const [va] = await table.putAll('aon2', [['a', '1']]);
      const out = await table.replaceAll('aon2', [
        { key: 'a', value: '2', version: va },
        { key: 'b', value: '2', version: Version.NOT_EXISTS },
        { key: 'c', value: '2' },
      ]);
      expect(out).toHaveLength(3);
      expect(out.every((v) => v instanceof Version)).toBe(true);
      expect((await table.getAll('aon2', ['a', 'b', 'c'])).map((e) => e?.value)).toEqual(['2', '2', '2']);
    });

    it('removes all keys atomically, each conditional or not, and resolves to nothing', async () => {
      const table = await ctx.strings();
      const [va, vb] = await table.putAll('rma', [
        ['a', '1'],
        ['b', '1'],
      ]);
      expect(
        await rejection(
          table.removeAll('rma', [
            { key: 'a', version: va },
            { key: 'b', version: bump(vb, 1) },
          ]),
        ),
      ).toBeInstanceOf(BadKeyVersionError);
      expect(
        await rejection(
          table.removeAll('rma', [
            { key: 'a', version: va },
            { key: 'missing', version: va },
          ]),
        ),
      ).toBeInstanceOf(NoSuchKeyError);
      expect(await table.exists('rma', 'a')).toBe(true);
      expect(await table.removeAll('rma', [{ key: 'a', version: va }, { key: 'b' }, { key: 'never' }])).toBeUndefined();
      expect(await table.getAll('rma', ['a', 'b'])).toEqual([null, null]);
    });

    it('mixes insert, put, remove and removeRange in one atomic update', async () => {
      const table = await ctx.strings();
      await table.putAll('mix', [
        ['r01', 'x'],
        ['r02', 'x'],
        ['r03', 'x'],
        ['keep', 'x'],
        ['gone', 'x'],
      ]);
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

    it('writes nothing of an update whose insert collides', async () => {
      const table = await ctx.strings();
      await table.put('mix2', 'exists', '1');
      const err = await rejection(
        table.update('mix2', [
          { type: 'put', key: 'a', value: '1' },
          { type: 'insert', key: 'exists', value: '2' },
        ]),
      );
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect([err.code, err.key, err.index]).toEqual(['BAD_KEY_VERSION', 'exists', 1]);
      expect(await table.get('mix2', 'a')).toBeNull();
    });

    it('checks the conditions of an update against the state before it, even after a range removal in it', async () => {
      const table = await ctx.strings();
      const [v1] = await table.putAll('before', [
        ['r1', 'x'],
        ['r2', 'x'],
      ]);
      const err = await rejection(
        table.update('before', [
          { type: 'removeRange', prefix: 'r' },
          { type: 'insert', key: 'r1', value: 'y' },
        ]),
      );
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect([err.key, err.index]).toEqual(['r1', 1]);
      const entry = await table.get('before', 'r1');
      expect([entry?.value, entry?.version.equals(v1), await table.exists('before', 'r2')]).toEqual(['x', true, true]);
    });

    it('applies an update in order: a range removal after a put of the same batch removes it', async () => {
      const table = await ctx.strings();
      await table.put('order', 'r1', 'x');
      const out = await table.update('order', [
        { type: 'put', key: 'r9', value: 'y' },
        { type: 'removeRange', prefix: 'r' },
        { type: 'put', key: 's', value: 'z' },
      ]);
      expect(out[0]).toBeInstanceOf(Version);
      expect((await table.getAll('order', ['r1', 'r9', 's'])).map((e) => e?.value ?? null)).toEqual([null, null, 'z']);
    });

    it('removes a range by from / to (to exclusive), by one bound, or the whole family, and nothing outside it', async () => {
      const table = await ctx.strings();
      const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
      const left = async (family: string) => (await pagesOf(table.keyIterator(family))).flatMap((p) => p.items.map((k) => k.key));
      const cases: [{ from?: string; to?: string; prefix?: string }, string[]][] = [
        [{ from: 'b', to: 'e' }, ['a', 'e', 'f']],
        [{ from: 'd' }, ['a', 'b', 'c']],
        [{ to: 'c' }, ['c', 'd', 'e', 'f']],
        [{ prefix: 'c', from: 'a', to: 'f' }, ['a', 'b', 'd', 'e', 'f']],
        [{}, []],
      ];
      await table.put(null, 'b', 'family-less');
      await table.put('neighbour', 'b', 'other family');
      for (const [i, [range, expected]] of cases.entries()) {
        await table.putAll(
          `range-${i}`,
          keys.map((k) => [k, 'v'] as const),
        );
        expect(await table.update(`range-${i}`, [{ type: 'removeRange', ...range }])).toEqual([null]);
        expect(await left(`range-${i}`), JSON.stringify(range)).toEqual(expected);
      }
      expect([(await table.get(null, 'b'))?.value, (await table.get('neighbour', 'b'))?.value]).toEqual(['family-less', 'other family']);
    });

    it('rejects duplicate keys in a batch with InvalidArgumentError naming the key, before writing anything', async () => {
      const table = await ctx.strings();
      const err = await rejection(
        table.putAll('dup', [
          ['a', '1'],
          ['b', '2'],
          ['a', '3'],
        ]),
      );
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect([err.message, err.index]).toEqual(['key "a" appears more than once in the batch (index 2)', 2]);
      expect(
        await rejection(
          table.update('dup', [
            { type: 'put', key: 'c', value: '1' },
            { type: 'remove', key: 'c' },
          ]),
        ),
      ).toBeInstanceOf(InvalidArgumentError);
      expect(await table.getAll('dup', ['a', 'b', 'c'])).toEqual([null, null, null]);
    });

    it('rejects what a broken custom serializer returns, single key and batch, and writes nothing', async () => {
      const broken = await ctx.target().table({
        keySerializer: Serializers.utf8,
        valueSerializer: { serialize: (v: string) => (v === 'bad' ? ('not bytes' as unknown as Uint8Array) : Buffer.from(v)), deserialize: (b: Uint8Array) => Buffer.from(b).toString() },
      });
      const single = await rejection(broken.put('ser', 'a', 'bad'));
      expect([single.constructor, single.message]).toEqual([InvalidArgumentError, 'value serializer returned string, not a Uint8Array']);
      const batch = await rejection(
        broken.putAll('ser', [
          ['a', 'ok'],
          ['b', 'bad'],
        ]),
      );
      expect([batch.constructor, batch.message, batch.index]).toEqual([InvalidArgumentError, 'value serializer returned string, not a Uint8Array', 1]);
      expect(await broken.getAll('ser', ['a', 'b'])).toEqual([null, null]);
    });

    it('puts undefined through the value serializer like any value (JSON refuses it), single key as in a batch', async () => {
      const json = await ctx.target().table({ keySerializer: Serializers.utf8, valueSerializer: Serializers.json });
      for (const attempt of [json.put(null, 'undef', undefined), json.putIfAbsent('undef', 'k', undefined), json.putAll('undef', [['k', undefined]])]) {
        const err = await rejection(attempt);
        expect([err.constructor, err.message]).toEqual([InvalidArgumentError, 'value cannot be serialized: the json serializer cannot encode undefined']);
      }
      expect(await json.get(null, 'undef')).toBeNull();
      expect(await json.get('undef', 'k')).toBeNull();
    });

    it('refuses batch arguments of the wrong shape with InvalidArgumentError naming the entry, and writes nothing', async () => {
      const table = await ctx.strings();
      const loose = table as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const cases: [Promise<unknown>, string, number | undefined][] = [
        [loose.putAll('shape', 5), 'putAll takes an iterable of [key, value] pairs, got number', undefined],
        [loose.putAll('shape', [['a', '1'], 5]), 'putAll entry 1 must be a [key, value] pair, got number', 1],
        [loose.replaceAll('shape', [{ key: 'a', value: '1' }, null]), 'replaceAll entry 1 must be an object { key, value, version? }, got null', 1],
        [loose.removeAll('shape', [{ key: 'a' }, 'b']), 'removeAll entry 1 must be an object { key, version? }, got string', 1],
        [loose.update('shape', 'put'), 'update takes an iterable of modifications, got string', undefined],
        [
          loose.update('shape', [
            { type: 'put', key: 'a', value: '1' },
            { type: 'bogus', key: 'b' },
          ]),
          'modification 1 has type "bogus"; expected insert, put, remove or removeRange',
          1,
        ],
        [loose.getAll('shape', 7), 'getAll takes an iterable of keys, got number', undefined],
      ];
      for (const [call, message, index] of cases) {
        const err = await rejection(call);
        expect(err, message).toBeInstanceOf(InvalidArgumentError);
        expect([err.message, err.index]).toEqual([message, index]);
      }
      expect(await table.get('shape', 'a')).toBeNull();
    });

    it('refuses a multi-key update without a family with InvalidArgumentError', async () => {
      const table = await ctx.strings();
      const loose = table as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      for (const [operation, args] of [
        ['putAll', [['a', '1']]],
        ['replaceAll', [{ key: 'a', value: '1' }]],
        ['removeAll', [{ key: 'a' }]],
        ['update', [{ type: 'put', key: 'a', value: '1' }]],
      ] as const) {
        const err = await rejection(loose[operation](null, args));
        expect([err.constructor, err.message]).toEqual([InvalidArgumentError, `${operation} needs a key family: only keys of one family are updated atomically or iterated in order`]);
      }
      expect(await table.get(null, 'a')).toBeNull();
    });

    it('resolves an empty batch to [] (removeAll to nothing)', async () => {
      const table = await ctx.strings();
      expect(await table.putAll('empty', [])).toEqual([]);
      expect(await table.replaceAll('empty', [])).toEqual([]);
      expect(await table.update('empty', [])).toEqual([]);
      expect(await table.removeAll('empty', [])).toBeUndefined();
    });

    it('takes any iterable as a batch, a generator too', async () => {
      const table = await ctx.strings();
      function* pairs(): Generator<[string, string]> {
        yield ['g1', 'a'];
        yield ['g2', 'b'];
      }
      expect(await table.putAll('gen', pairs())).toHaveLength(2);
      expect((await table.getAll('gen', new Set(['g2', 'g1']))).map((e) => e?.value)).toEqual(['b', 'a']);
    });
  });
}
