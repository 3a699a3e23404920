/** Conformance: single-key updates (put, putIfAbsent, replace, remove) and what a version means. */
import { describe, expect, it } from 'vitest';
import { BadKeyVersionError, InvalidArgumentError, KeyValueTable, NoSuchKeyError, Version } from '../../client';
import type { TableSuiteContext } from './table-conformance-context';
import { bump, conditionMessage, rejection } from './table-conformance-context';

/** Two families of `table` whose keys live in different segments, each with key 'k' written. */
export async function familiesInTwoSegments(table: KeyValueTable<string, string>): Promise<[string, Version, string, Version]> {
  const first = await table.put('seg-a', 'k', '1');
  for (let i = 0; i < 64; i++) {
    const v = await table.put(`seg-b${i}`, 'k', '1');
    if (v.segmentId !== first.segmentId) return ['seg-a', first, `seg-b${i}`, v];
  }
  throw new Error('no second segment found');
}

/** Registers the single-key cases. */
export function singleKeyConformance(ctx: TableSuiteContext): void {
  describe('single-key updates', () => {
    it('puts unconditionally and returns increasing versions of one segment', async () => {
      const table = await ctx.strings();
      const v1 = await table.put(null, 'p1', 'a');
      const v2 = await table.put(null, 'p1', 'b');
      expect(v2.segmentId).toBe(v1.segmentId);
      expect(v2.compareTo(v1)).toBeGreaterThan(0);
      const entry = await table.get(null, 'p1');
      expect(entry?.value).toBe('b');
      expect(entry?.version.equals(v2)).toBe(true);
    });

    it('inserts with putIfAbsent once, then fails with BadKeyVersionError naming the key', async () => {
      const table = await ctx.strings();
      const v = await table.putIfAbsent('ins', 'k', 'first');
      const err = await rejection(table.putIfAbsent('ins', 'k', 'second'));
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect([err.code, err.key, err.index, err.segment, err.table]).toEqual(['BAD_KEY_VERSION', 'k', 0, v.segmentId, table.name]);
      expect(err.message).toBe(conditionMessage(table, `modifications[0]: the key already exists in segment ${v.segmentId}`, 'k'));
      expect((await table.get('ins', 'k'))?.value).toBe('first');
    });

    it('inserts a removed key again with putIfAbsent', async () => {
      const table = await ctx.strings();
      await table.putIfAbsent(null, 'again', '1');
      await table.remove(null, 'again');
      await table.putIfAbsent(null, 'again', '2');
      expect((await table.get(null, 'again'))?.value).toBe('2');
    });

    it('replaces at the current version or NO_VERSION, and refuses stale, unknown and NOT_EXISTS versions', async () => {
      const table = await ctx.strings();
      const v1 = await table.put('rep', 'k', '1');
      const v2 = await table.replace('rep', 'k', '2', v1);
      const stale = await rejection(table.replace('rep', 'k', 'x', v1));
      expect(stale).toBeInstanceOf(BadKeyVersionError);
      expect(stale.message).toBe(conditionMessage(table, `modifications[0]: the key's version is ${v2}, not ${v1}`, 'k'));
      expect(await rejection(table.replace('rep', 'k', 'x', bump(v2, 1000)))).toBeInstanceOf(BadKeyVersionError);
      const v3 = await table.replace('rep', 'k', '3', Version.NO_VERSION);
      const exists = await rejection(table.replace('rep', 'k', 'x', Version.NOT_EXISTS));
      expect(exists).toBeInstanceOf(BadKeyVersionError);
      expect(exists.message).toBe(conditionMessage(table, `modifications[0]: the key already exists in segment ${v3.segmentId}`, 'k'));
      const entry = await table.get('rep', 'k');
      expect([entry?.value, entry?.version.equals(v3)]).toEqual(['3', true]);
    });

    it('accepts a version that went through toString and Version.fromString, as an ETag would', async () => {
      const table = await ctx.strings();
      const etag = (await table.put('etag', 'k', '1')).toString();
      expect(etag).toMatch(/^\d+\.\d+$/);
      const v = await table.replace('etag', 'k', '2', Version.fromString(etag));
      expect((await table.get('etag', 'k'))?.version.toString()).toBe(v.toString());
    });

    it('rejects a well-formed version of another segment with BadKeyVersionError', async () => {
      const table = await ctx.strings();
      const [, va, fb, vb] = await familiesInTwoSegments(table);
      // Same sequence as the current one, but another partition's segment: never a match.
      const foreign = Version.fromString(`${va.segmentId}.${vb.sequence}`);
      const err = await rejection(table.replace(fb, 'k', 'x', foreign));
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect(err.message).toBe(conditionMessage(table, `modifications[0]: the key's version is ${vb}, not ${foreign}`, 'k'));
      expect(await rejection(table.remove(fb, 'k', foreign))).toBeInstanceOf(BadKeyVersionError);
      expect((await table.get(fb, 'k'))?.value).toBe('1');
    });

    it('rejects a version of another table with BadKeyVersionError', async () => {
      const table = await ctx.strings();
      const other = await ctx.strings();
      const theirs = await other.put('f', 'k', 'theirs');
      await table.put('f', 'k', 'ours');
      expect(await rejection(table.replace('f', 'k', 'x', theirs))).toBeInstanceOf(BadKeyVersionError);
      expect((await table.get('f', 'k'))?.value).toBe('ours');
    });

    it('rejects a conditional update of a missing key with NoSuchKeyError', async () => {
      const table = await ctx.strings();
      const v = await table.put('nsk', 'present', '1');
      const err = await rejection(table.replace('nsk', 'absent', 'x', v));
      expect(err).toBeInstanceOf(NoSuchKeyError);
      expect([err.code, err.key, err.index]).toEqual(['NO_SUCH_KEY', 'absent', 0]);
      expect(err.message).toBe(conditionMessage(table, `modifications[0]: the key does not exist in segment ${v.segmentId}`, 'absent'));
      expect(await rejection(table.remove('nsk', 'absent', v))).toBeInstanceOf(NoSuchKeyError);
      expect(await table.get('nsk', 'absent')).toBeNull();
    });

    it('inserts a missing key through replace with NOT_EXISTS', async () => {
      const table = await ctx.strings();
      const v = await table.replace('ne', 'k', 'v', Version.NOT_EXISTS);
      expect((await table.get('ne', 'k'))?.version.equals(v)).toBe(true);
    });

    it('refuses replace without a version, and a condition that is not a Version, with InvalidArgumentError', async () => {
      const table = await ctx.strings();
      const loose = table as unknown as { replace(f: string, k: string, v: string, version: unknown): Promise<Version> };
      const missing = await rejection(loose.replace('rv', 'k', 'v', undefined));
      expect([missing.constructor, missing.message]).toEqual([InvalidArgumentError, 'replace needs a version (Version.NO_VERSION for none)']);
      const text = await rejection(loose.replace('rv', 'k', 'v', '1.2'));
      expect([text.constructor, text.message]).toEqual([InvalidArgumentError, 'version must be a Version (use Version.fromString for strings), got string']);
      expect(() => Version.fromString('1.x')).toThrow(InvalidArgumentError);
      expect(await table.get('rv', 'k')).toBeNull();
    });

    it('removes unconditionally without a version (also a missing key) and conditionally with one', async () => {
      const table = await ctx.strings();
      await table.remove(null, 'never-written');
      const v1 = await table.put('rm', 'k', '1');
      const v2 = await table.put('rm', 'k', '2');
      expect(await rejection(table.remove('rm', 'k', v1))).toBeInstanceOf(BadKeyVersionError);
      expect(await table.remove('rm', 'k', v2)).toBeUndefined();
      expect(await table.exists('rm', 'k')).toBe(false);
    });

    it('keeps a key of a family apart from the same key in another family and without one', async () => {
      const table = await ctx.strings();
      await table.put('a', 'k', 'in a');
      await table.put('b', 'k', 'in b');
      await table.put(null, 'k', 'in none');
      await table.remove('b', 'k');
      expect([(await table.get('a', 'k'))?.value, await table.get('b', 'k'), (await table.get(null, 'k'))?.value]).toEqual(['in a', null, 'in none']);
    });

    it('stores an empty value and reads it back', async () => {
      const table = await ctx.strings();
      await table.put('empty', 'k', '');
      expect((await table.get('empty', 'k'))?.value).toBe('');
    });

    it('lets exactly one of two writers racing with the same version win', async () => {
      const table = await ctx.strings();
      for (let round = 0; round < 10; round++) {
        const v = await table.put('race', `k${round}`, 'start');
        const results = await Promise.allSettled([table.replace('race', `k${round}`, 'writer-1', v), table.replace('race', `k${round}`, 'writer-2', v)]);
        const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
        expect(lost).toHaveLength(1);
        expect(lost[0].reason).toBeInstanceOf(BadKeyVersionError);
        const winner = results[0].status === 'fulfilled' ? 'writer-1' : 'writer-2';
        expect((await table.get('race', `k${round}`))?.value).toBe(winner);
      }
    });
  });
}
