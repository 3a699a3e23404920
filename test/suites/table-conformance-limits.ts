/** Conformance: the limits of DESIGN §2, refused before anything is written and accepted right at them. */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_KEY_FAMILY_LENGTH, MAX_KEY_LENGTH, MAX_VALUE_LENGTH, Serializers } from '../../client';
import type { TableSuiteContext } from './table-conformance-context';
import { rejection } from './table-conformance-context';

/** Registers the limit cases. */
export function limitsConformance(ctx: TableSuiteContext): void {
  describe('limits', () => {
    /** Expects `p` to fail with InvalidArgumentError and exactly `message`. */
    async function refused(p: Promise<unknown>, message: string, index?: number): Promise<void> {
      const err = await rejection(p);
      expect(err, message).toBeInstanceOf(InvalidArgumentError);
      expect([err.code, err.message, err.index]).toEqual(['INVALID_ARGUMENT', message, index]);
    }

    it('names the key family length and its maximum, and refuses an empty family', async () => {
      const table = await ctx.strings();
      await refused(table.put('f'.repeat(MAX_KEY_FAMILY_LENGTH + 1), 'k', 'v'), 'key family is 2049 bytes; the maximum is 2048');
      await refused(table.get('é'.repeat(1025), 'k'), 'key family is 2050 bytes; the maximum is 2048');
      await refused(table.put('', 'k', 'v'), 'key family must be null or a non-empty string');
    });

    it('names the key length (with its family) and its maximum, and refuses an empty key', async () => {
      const table = await ctx.strings();
      await refused(table.put('ff', 'k'.repeat(MAX_KEY_LENGTH - 1), 'v'), 'key with its family is 8191 bytes; the maximum is 8190');
      await refused(table.put(null, 'k'.repeat(9000), 'v'), 'key is 9000 bytes; the maximum is 8190');
      await refused(table.put(null, '', 'v'), 'key is empty; the minimum is 1 byte');
      await refused(table.getAll('ff', ['a', 'k'.repeat(8189)]), 'key with its family is 8191 bytes; the maximum is 8190', 1);
      await refused(
        table.putAll('ff', [
          ['a', 'v'],
          ['', 'v'],
        ]),
        'key is empty; the minimum is 1 byte',
        1,
      );
      expect(await table.get('ff', 'a')).toBeNull();
    });

    it('names the value length and its maximum', async () => {
      const table = await ctx.strings();
      await refused(table.put(null, 'k', 'v'.repeat(MAX_VALUE_LENGTH + 1)), 'value is 1040385 bytes; the maximum is 1040384');
      await refused(
        table.update('f', [
          { type: 'insert', key: 'a', value: 'v' },
          { type: 'put', key: 'b', value: 'v'.repeat(MAX_VALUE_LENGTH + 1) },
        ]),
        'value is 1040385 bytes; the maximum is 1040384',
        1,
      );
      expect(await table.get('f', 'a')).toBeNull();
    });

    it('names the batch size and its maximum, in items and in bytes', async () => {
      const table = await ctx.strings();
      await refused(
        table.putAll(
          'f',
          Array.from({ length: MAX_BATCH_ITEMS + 1 }, (_, i) => [`k${i}`, 'v'] as const),
        ),
        'batch has 257 items; the maximum is 256',
      );
      const big = Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'.repeat(1_000_000)] as const);
      await refused(table.putAll('f', big), `batch is 17000041 bytes; the maximum is ${MAX_BATCH_BYTES}`);
      expect(await table.get('f', 'k0')).toBeNull();
    });

    it('accepts a family, a key and a value right at their limits, and a batch of the maximum items', async () => {
      const table = await ctx.target().table({ keySerializer: Serializers.utf8, valueSerializer: Serializers.bytes });
      const family = 'f'.repeat(MAX_KEY_FAMILY_LENGTH);
      const key = 'k'.repeat(MAX_KEY_LENGTH - MAX_KEY_FAMILY_LENGTH);
      const value = new Uint8Array(MAX_VALUE_LENGTH).fill(7);
      await table.put(family, key, value);
      const entry = await table.get(family, key);
      expect([entry?.key, entry?.value.length, entry?.value[MAX_VALUE_LENGTH - 1]]).toEqual([key, MAX_VALUE_LENGTH, 7]);
      await table.put(null, 'n'.repeat(MAX_KEY_LENGTH), new Uint8Array([1]));
      expect(await table.exists(null, 'n'.repeat(MAX_KEY_LENGTH))).toBe(true);
      const versions = await table.putAll(
        'many',
        Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => [`k${i}`, new Uint8Array([i % 256])] as const),
      );
      expect(versions).toHaveLength(MAX_BATCH_ITEMS);
    });

    it('refuses a key or family of the wrong type with InvalidArgumentError', async () => {
      const table = await ctx.strings();
      const loose = table as unknown as { put(f: unknown, k: unknown, v: unknown): Promise<unknown> };
      await refused(loose.put(5, 'k', 'v'), 'key family must be a string or null, got number');
      await refused(loose.put(null, 5, 'v'), 'key cannot be serialized: the utf8 serializer takes strings, got number');
    });
  });
}
