/** Storage conformance, limits and malformed input: exactly at and one past every boundary. */
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_GET_KEYS, MAX_ITERATOR_PAGE_ITEMS, MAX_KEY_FAMILY_LENGTH, MAX_KEY_LENGTH, MAX_VALUE_LENGTH } from '../../proto/limits';
import type { IterateInput } from '../../segmentstore/storage/read/read-validation';
import type { ModificationInput } from '../../segmentstore/storage/validation';
import type { SuiteContext } from './storage-conformance-context';
import { b, expectFailure, put, read } from './storage-conformance-context';

/** Registers the limit tests. */
export function limitsConformance(ctx: SuiteContext): void {
  describe('limits and malformed input', () => {
    const update = (segmentId: string, modifications: ModificationInput[]) => ctx.store().update({ segmentId, modifications });

    it('accepts a family of 2048 bytes and rejects 2049 naming field and limit', async () => {
      const id = await ctx.segment();
      await put(ctx.store(), id, 'f'.repeat(MAX_KEY_FAMILY_LENGTH), 'k', 'v');
      await expectFailure(put(ctx.store(), id, 'f'.repeat(MAX_KEY_FAMILY_LENGTH + 1), 'k', 'v'), 'INVALID_ARGUMENT', 0, 'modifications[0].family is 2049 bytes; the maximum is 2048');
    });

    it('accepts family + key of 8190 bytes and rejects 8191', async () => {
      const id = await ctx.segment();
      await put(ctx.store(), id, 'fam', 'k'.repeat(MAX_KEY_LENGTH - 3), 'v');
      await expectFailure(put(ctx.store(), id, 'fam', 'k'.repeat(MAX_KEY_LENGTH - 2), 'v'), 'INVALID_ARGUMENT', 0, 'modifications[0]: family + key is 8191 bytes; the maximum is 8190');
      await expectFailure(
        ctx.store().get({ segmentId: id, keys: [{ family: 'fam', key: b('k'.repeat(MAX_KEY_LENGTH)) }] }),
        'INVALID_ARGUMENT',
        0,
        'keys[0]: family + key is 8193 bytes; the maximum is 8190',
      );
    });

    it('accepts a value of 1,040,384 bytes and rejects one more', async () => {
      const id = await ctx.segment();
      await put(ctx.store(), id, 'f', 'k', Buffer.alloc(MAX_VALUE_LENGTH, 1));
      expect((await read(ctx.store(), id, 'f', 'k'))!.value.length).toBe(MAX_VALUE_LENGTH);
      await expectFailure(put(ctx.store(), id, 'f', 'k', Buffer.alloc(MAX_VALUE_LENGTH + 1)), 'INVALID_ARGUMENT', 0, 'modifications[0].value is 1040385 bytes; the maximum is 1040384');
    });

    it('accepts 256 modifications and rejects 257', async () => {
      const id = await ctx.segment();
      const mods = (n: number) => Array.from({ length: n }, (_, i) => ({ family: 'f', key: b(`k${i}`), value: b('v') }));
      expect((await update(id, mods(MAX_BATCH_ITEMS))).sequences).toHaveLength(256);
      await expectFailure(update(id, mods(MAX_BATCH_ITEMS + 1)), 'INVALID_ARGUMENT', -1, 'modifications has 257 items; the maximum is 256');
    });

    it('accepts 16 MiB of keys and values in a batch and rejects one byte more, writing nothing', async () => {
      const id = await ctx.segment();
      const mods = (extra: number) => {
        const list: ModificationInput[] = Array.from({ length: 16 }, (_, i) => ({ family: 'f', key: b(`key${String(i).padStart(5, '0')}`), value: Buffer.alloc(MAX_VALUE_LENGTH) }));
        const used = 16 * (8 + MAX_VALUE_LENGTH);
        list.push({ family: 'f', key: b('lastkey1'), value: Buffer.alloc(MAX_BATCH_BYTES - used - 8 + extra) });
        return list;
      };
      await expectFailure(update(id, mods(1)), 'INVALID_ARGUMENT', -1, 'modifications hold 16777217 bytes of keys and values; the maximum is 16777216');
      expect(await read(ctx.store(), id, 'f', 'key00000')).toBeNull();
      expect((await update(id, mods(0))).sequences).toHaveLength(17);
    });

    it('rejects duplicate keys naming both indices, and writes nothing', async () => {
      const id = await ctx.segment();
      const p = update(id, [
        { family: 'f', key: b('a'), value: b('1') },
        { family: 'f', key: b('b'), value: b('2') },
        { type: 'REMOVE', family: 'f', key: b('a') },
      ]);
      await expectFailure(p, 'INVALID_ARGUMENT', 2, 'modifications[2].key duplicates modifications[0].key; a batch may name a key once');
      expect(await read(ctx.store(), id, 'f', 'a')).toBeNull();
    });

    it('rejects a batch spanning two families', async () => {
      const id = await ctx.segment();
      await expectFailure(
        update(id, [
          { family: 'a', key: b('k'), value: b('v') },
          { family: 'b', key: b('k'), value: b('v') },
        ]),
        'INVALID_ARGUMENT',
        1,
        'modifications[1].family "b" differs from modifications[0].family "a"; a batch of several modifications must keep to one key family',
      );
    });

    it('rejects empty keys, keys on REMOVE_RANGE, unknown enum values and malformed numbers', async () => {
      const id = await ctx.segment();
      await expectFailure(update(id, [{ family: 'f', key: b(''), value: b('v') }]), 'INVALID_ARGUMENT', 0, 'modifications[0].key is empty');
      await expectFailure(
        update(id, [{ type: 'REMOVE_RANGE', family: 'f', key: b('k') }]),
        'INVALID_ARGUMENT',
        0,
        'modifications[0].key must be empty for REMOVE_RANGE (use rangeFrom, rangeTo, rangePrefix)',
      );
      await expectFailure(update(id, [{ type: 9, family: 'f', key: b('k') }]), 'INVALID_ARGUMENT', 0, /^modifications\[0\]\.type .+ is not one of PUT, INSERT, REMOVE, REMOVE_RANGE$/);
      await expectFailure(
        update(id, [{ family: 'f', key: b('k'), condition: { kind: 7 } }]),
        'INVALID_ARGUMENT',
        0,
        /^modifications\[0\]\.condition\.kind .+ is not one of NONE, NOT_EXISTS, VERSION$/,
      );
      await expectFailure(update(id, [{ family: 'f', key: b('k'), ttlMs: 'soon' }]), 'INVALID_ARGUMENT', 0, 'modifications[0].ttlMs "soon" is not a decimal unsigned 64-bit integer');
      await expectFailure(
        update(id, [{ family: 'f', key: b('k'), condition: { kind: 'VERSION', segmentId: id, sequence: '-1' } }]),
        'INVALID_ARGUMENT',
        0,
        'modifications[0].condition.sequence "-1" is not a decimal unsigned 64-bit integer',
      );
      expect(await read(ctx.store(), id, 'f', 'k')).toBeNull();
    });

    it('accepts 10,000 iterator items and Get keys, and rejects one more', async () => {
      const id = await ctx.segment();
      await put(ctx.store(), id, 'f', 'k', 'v');
      expect((await ctx.store().iterate({ segmentId: id, family: 'f', maxItems: MAX_ITERATOR_PAGE_ITEMS })).items).toHaveLength(1);
      await expectFailure(ctx.store().iterate({ segmentId: id, family: 'f', maxItems: MAX_ITERATOR_PAGE_ITEMS + 1 }), 'INVALID_ARGUMENT', -1, 'maxItems is 10001; the maximum is 10000');
      const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ family: 'f', key: b(`k${i}`) }));
      expect((await ctx.store().get({ segmentId: id, keys: keys(MAX_GET_KEYS) })).entries).toHaveLength(MAX_GET_KEYS);
      await expectFailure(ctx.store().get({ segmentId: id, keys: keys(MAX_GET_KEYS + 1) }), 'INVALID_ARGUMENT', -1, 'keys has 10001 items; the maximum is 10000');
    });

    it('continues an iteration only after a key of its range: after must lie within prefix, from and to', async () => {
      const id = await ctx.segment();
      await update(
        id,
        ['a1', 'a2', 'a3', 'b1'].map((k) => ({ family: 'f', key: b(k), value: b(k) })),
      );
      const iterate = (o: Partial<IterateInput>) => ctx.store().iterate({ segmentId: id, family: 'f', maxItems: 10, hasAfter: true, ...o });
      const keys = async (o: Partial<IterateInput>) => (await iterate(o)).items.map((e) => Buffer.from(e.key).toString());
      // The last key of a page, up to either end of the range, continues it.
      expect(await keys({ prefix: b('a'), after: b('a1') })).toEqual(['a2', 'a3']);
      expect(await keys({ from: b('a2'), to: b('b1'), toInclusive: true, reverse: true, after: b('b1') })).toEqual(['a3', 'a2']);
      expect(await keys({ from: b('a2'), after: b('a2') })).toEqual(['a3', 'b1']);
      const outside = 'after lies outside the iterated range (prefix, from, to); a resume position is the last key of a page of the same iteration';
      for (const o of [
        { prefix: b('a'), after: b('b1') },
        { prefix: b('b'), after: b('a3'), reverse: true },
        { from: b('a2'), after: b('a1') },
        { from: b('a2'), after: b('a1'), reverse: true },
        { to: b('a3'), after: b('a3') },
        { to: b('a3'), toInclusive: true, after: b('a30') },
      ])
        await expectFailure(iterate(o), 'INVALID_ARGUMENT', -1, outside);
      await expectFailure(iterate({ after: Buffer.alloc(0) }), 'INVALID_ARGUMENT', -1, 'after is empty; a resume position is the last key of a page of the same iteration');
      await expectFailure(iterate({ after: Buffer.alloc(MAX_KEY_LENGTH, 0x61) }), 'INVALID_ARGUMENT', -1, 'family + after is 8191 bytes; the maximum is 8190');
    });

    it('continues a Scan only from a position that decodes, naming what is wrong with it', async () => {
      const id = await ctx.segment();
      for (const k of ['k1', 'k2']) await put(ctx.store(), id, 'fam', k, 'v');
      await put(ctx.store(), id, '', 'loose', 'v');
      const scan = (after: Uint8Array) => ctx.store().scan({ segmentId: id, maxItems: 10, after });
      const first = await ctx.store().scan({ segmentId: id, maxItems: 1 });
      expect((await scan(first.position)).items.map((e) => Buffer.from(e.key).toString())).toEqual(['k2', 'loose']);
      // A position is the data key of the page's last item: a keyed family's, or a family-less key's
      // (0x46 | family length u16 | family | key, or 0x4e | key); a key removed since still places it.
      const keyed = (family: Buffer, key: Buffer) => Buffer.concat([Buffer.from([0x46, family.length >> 8, family.length & 0xff]), family, key]);
      expect((await scan(keyed(b('fam'), b('k1')))).items.map((e) => Buffer.from(e.key).toString())).toEqual(['k2', 'loose']);
      expect((await scan(keyed(b('fam'), b('k0')))).items).toHaveLength(3);
      expect((await scan(Buffer.concat([b('N'), b('loose')]))).items).toEqual([]);
      const refused = (why: string) => `after is not a Scan position (${why}); pass back the position of the previous page, or an empty one to start`;
      const cases: [Buffer, string][] = [
        [Buffer.from('0a0b', 'hex'), 'it names neither a key family nor the family-less keys'],
        [Buffer.from([0x46, 0x00]), 'its family length passes its end'],
        [keyed(b('fam'), Buffer.alloc(0)).subarray(0, 5), 'its family length passes its end'],
        [keyed(Buffer.alloc(0), b('k1')), 'its family is empty'],
        [keyed(b('fam'), Buffer.alloc(0)), 'its key is empty'],
        [b('N'), 'its key is empty'],
        [keyed(Buffer.from([0xc3, 0x28]), b('k1')), 'its family is not UTF-8'],
        [keyed(Buffer.alloc(MAX_KEY_FAMILY_LENGTH + 1, 0x66), b('k1')), `its family is ${MAX_KEY_FAMILY_LENGTH + 1} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`],
        [keyed(b('fam'), Buffer.alloc(MAX_KEY_LENGTH - 2, 0x61)), `its family + key is ${MAX_KEY_LENGTH + 1} bytes; the maximum is ${MAX_KEY_LENGTH}`],
        [Buffer.concat([b('N'), Buffer.alloc(MAX_KEY_LENGTH + 1, 0x61)]), `its family + key is ${MAX_KEY_LENGTH + 1} bytes; the maximum is ${MAX_KEY_LENGTH}`],
      ];
      for (const [after, why] of cases) await expectFailure(scan(after), 'INVALID_ARGUMENT', -1, refused(why));
    });
  });
}
