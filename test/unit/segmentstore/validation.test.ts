import { describe, expect, it } from 'vitest';
import { checkGetKeys, checkIterate } from '../../../segmentstore/storage/read/read-validation';
import { checkDuplicates, checkModifications, checkSegmentId, MAX_TTL_MS } from '../../../segmentstore/storage/validation';

function failure(fn: () => unknown): { code: string; message: string; index: number } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string; index: number };
  }
  throw new Error('expected a failure');
}

const k = (s: string) => Buffer.from(s);

describe('segment-store validation', () => {
  it('names the field and the limit, maximum last', () => {
    expect(failure(() => checkModifications([{ key: k('a') }, { family: 'x'.repeat(3000), key: k('b') }]))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      index: 1,
      message: 'modifications[1].family is 3000 bytes; the maximum is 2048',
    });
    expect(failure(() => checkModifications([{ key: k('a'), value: Buffer.alloc(2_000_000) }])).message).toBe('modifications[0].value is 2000000 bytes; the maximum is 1040384');
    expect(failure(() => checkModifications([{ key: Buffer.alloc(8191) }])).message).toBe('modifications[0]: family + key is 8191 bytes; the maximum is 8190');
    expect(failure(() => checkModifications(Array.from({ length: 300 }, () => ({ key: k('a') })))).message).toBe('modifications has 300 items; the maximum is 256');
  });

  it('rejects malformed segment ids, numbers and enums', () => {
    expect(failure(() => checkSegmentId('01')).message).toBe('segmentId "01" is not a decimal unsigned 64-bit integer');
    expect(failure(() => checkSegmentId(undefined)).message).toBe('segmentId "" is not a decimal unsigned 64-bit integer');
    expect(checkSegmentId('0')).toBe('0');
    expect(failure(() => checkModifications([{ type: 'UPSERT', key: k('a') }])).message).toBe('modifications[0].type "UPSERT" is not one of PUT, INSERT, REMOVE, REMOVE_RANGE');
    expect(failure(() => checkModifications([{ key: k('a'), ttlMs: String(MAX_TTL_MS + 1) }])).message).toBe(`modifications[0].ttlMs is ${MAX_TTL_MS + 1}; the maximum is ${MAX_TTL_MS}`);
    expect(failure(() => checkModifications([{ type: 'INSERT', key: k('a'), condition: { kind: 'VERSION', segmentId: '1', sequence: '1' } }])).message).toBe(
      'modifications[0].condition VERSION is not allowed on INSERT',
    );
    expect(failure(() => checkModifications([{ type: 'REMOVE_RANGE', condition: { kind: 'NOT_EXISTS' } }])).message).toBe('modifications[0].condition NOT_EXISTS is not allowed on REMOVE_RANGE');
  });

  it('names both indices of a duplicate key', () => {
    const mods = checkModifications([
      { family: 'f', key: k('a') },
      { family: 'f', key: k('b') },
      { family: 'f', key: k('a') },
    ]);
    expect(failure(() => checkDuplicates(mods, ['a', 'b', 'a'])).message).toBe('modifications[2].key duplicates modifications[0].key; a batch may name a key once');
  });

  it('refuses a family-less batch of several keys and a family-less range removal, as the client does', () => {
    const several = failure(() => checkModifications([{ key: k('a') }, { key: k('b') }]));
    expect(several.code).toBe('INVALID_ARGUMENT');
    expect(several.message).toBe('modifications hold 2 family-less modifications; a batch without a key family holds one key (give the batch a family)');
    const range = failure(() => checkModifications([{ type: 'REMOVE_RANGE' }]));
    expect(range.message).toBe('modifications[0] is a REMOVE_RANGE without a family; a range removal needs a key family');
    expect(checkModifications([{ key: k('a') }])).toHaveLength(1);
    expect(checkModifications([{ type: 'REMOVE_RANGE', family: 'f' }])).toHaveLength(1);
  });

  it('checks Get keys and Iterate requests', () => {
    expect(failure(() => checkGetKeys([{ family: 'f', key: k('') }])).message).toBe('keys[0].key is empty');
    expect(failure(() => checkIterate({ family: 'x'.repeat(2049) })).message).toBe('family is 2049 bytes; the maximum is 2048');
    expect(failure(() => checkIterate({ maxItems: -1 })).message).toBe('maxItems -1 is not a non-negative integer');
    expect(checkIterate({}).maxItems).toBe(10);
    const outside = 'after lies outside the iterated range (prefix, from, to); a resume position is the last key of a page of the same iteration';
    expect(failure(() => checkIterate({ from: k('b'), hasAfter: true, after: k('a') })).message).toBe(outside);
    expect(failure(() => checkIterate({ prefix: k('b'), hasAfter: true, after: k('c') })).message).toBe(outside);
    expect(checkIterate({ from: k('b'), hasAfter: true, after: k('b') }).after).toEqual(k('b'));
  });
});
