/**
 * The storage conformance suite: DESIGN §2's table semantics at the segment level, run against any
 * {@link ConformanceTarget} (the in-process engine, a real segment-store process over gRPC).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ConformanceTarget } from './segment-store-adapter';
import { iterationConformance } from './storage-conformance-iteration';
import { limitsConformance } from './storage-conformance-limits';
import { SuiteContext, b, expectFailure, put, read, version } from './storage-conformance-context';

/** Registers the whole suite under `describe(name)`. */
export function storageConformance(name: string, factory: () => Promise<ConformanceTarget>): void {
  describe(`storage conformance: ${name}`, () => {
    let target: ConformanceTarget;
    let nextId = 1000;
    const ctx: SuiteContext = {
      store: () => target.store,
      target: () => target,
      segment: async () => {
        const id = String(nextId++);
        expect(await target.store.createSegment(id, `suite/t#${id}`)).toBe(true);
        return id;
      },
    };
    beforeAll(async () => {
      target = await factory();
    });
    afterAll(async () => {
      await target?.dispose();
    });
    segmentsConformance(ctx);
    pointOperationsConformance(ctx);
    batchesConformance(ctx);
    iterationConformance(ctx);
    limitsConformance(ctx);
  });
}

function segmentsConformance(ctx: SuiteContext): void {
  describe('segments', () => {
    it('creates and deletes idempotently', async () => {
      const id = await ctx.segment();
      expect(await ctx.store().createSegment(id)).toBe(false);
      expect((await ctx.store().listSegments()).map((s) => s.segmentId)).toContain(id);
      expect(await ctx.store().deleteSegment(id)).toBe(true);
      expect(await ctx.store().deleteSegment(id)).toBe(false);
      expect((await ctx.store().listSegments()).map((s) => s.segmentId)).not.toContain(id);
    });

    it('removes all data on delete, and a re-created segment starts empty with later versions', async () => {
      const id = await ctx.segment();
      const s1 = await put(ctx.store(), id, 'f', 'k', 'v');
      await ctx.store().deleteSegment(id);
      await expectFailure(read(ctx.store(), id, 'f', 'k'), 'SEGMENT_NOT_FOUND');
      expect(await ctx.store().createSegment(id)).toBe(true);
      expect(await read(ctx.store(), id, 'f', 'k')).toBeNull();
      const s2 = await put(ctx.store(), id, 'f', 'k2', 'v');
      expect(BigInt(s2)).toBeGreaterThan(BigInt(s1));
    });

    it('reports live entry count, key + value bytes and the last sequence', async () => {
      const id = await ctx.segment();
      await put(ctx.store(), id, 'f', 'ab', 'xyz');
      await put(ctx.store(), id, '', 'k', '12345');
      const last = await put(ctx.store(), id, 'f', 'gone', 'x');
      await ctx.store().update({ segmentId: id, modifications: [{ type: 'REMOVE', family: 'f', key: b('gone') }] });
      const info = await ctx.store().segmentInfo(id);
      expect(info).toMatchObject({ segmentId: id, entryCount: '2', bytes: String(2 + 3 + 1 + 5), lastSequence: last, table: `suite/t#${id}` });
    });

    it('answers SEGMENT_NOT_FOUND for an unknown segment and INVALID_ARGUMENT for a malformed id', async () => {
      const s = ctx.store();
      await expectFailure(s.update({ segmentId: '999999', modifications: [{ key: b('k') }] }), 'SEGMENT_NOT_FOUND');
      await expectFailure(s.get({ segmentId: '999999', keys: [] }), 'SEGMENT_NOT_FOUND');
      await expectFailure(s.iterate({ segmentId: '999999' }), 'SEGMENT_NOT_FOUND');
      await expectFailure(s.segmentInfo('999999'), 'SEGMENT_NOT_FOUND');
      await expectFailure(s.get({ segmentId: 'abc', keys: [] }), 'INVALID_ARGUMENT', -1, 'segmentId "abc" is not a decimal unsigned 64-bit integer');
      await expectFailure(s.createSegment('18446744073709551616'), 'INVALID_ARGUMENT');
      expect(await s.createSegment('18446744073709551615')).toBe(true);
      expect(await s.deleteSegment('18446744073709551615')).toBe(true);
    });
  });
}

function pointOperationsConformance(ctx: SuiteContext): void {
  describe('put / putIfAbsent / replace / remove / get', () => {
    it('put upserts unconditionally with strictly increasing versions', async () => {
      const id = await ctx.segment();
      const s1 = await put(ctx.store(), id, 'f', 'k', 'one');
      const s2 = await put(ctx.store(), id, 'f', 'k', 'two');
      expect(BigInt(s2)).toBeGreaterThan(BigInt(s1));
      expect(await read(ctx.store(), id, 'f', 'k')).toEqual({ value: 'two', sequence: s2 });
    });

    it('putIfAbsent (INSERT, or PUT with NOT_EXISTS) fails with BAD_KEY_VERSION when the key exists', async () => {
      const id = await ctx.segment();
      const mod = { type: 'INSERT' as const, family: 'f', key: b('k'), value: b('v') };
      await ctx.store().update({ segmentId: id, modifications: [mod] });
      await expectFailure(ctx.store().update({ segmentId: id, modifications: [mod] }), 'BAD_KEY_VERSION', 0);
      await expectFailure(put(ctx.store(), id, 'f', 'k', 'w', { condition: { kind: 'NOT_EXISTS' } }), 'BAD_KEY_VERSION', 0);
      expect((await read(ctx.store(), id, 'f', 'k'))!.value).toBe('v');
    });

    it('replace succeeds only on the current version; a missing key is NO_SUCH_KEY', async () => {
      const id = await ctx.segment();
      const s1 = await put(ctx.store(), id, 'f', 'k', 'one');
      const s2 = await put(ctx.store(), id, 'f', 'k', 'two', { condition: version(id, s1) });
      await expectFailure(put(ctx.store(), id, 'f', 'k', 'lost', { condition: version(id, s1) }), 'BAD_KEY_VERSION', 0);
      await expectFailure(put(ctx.store(), id, 'f', 'nope', 'x', { condition: version(id, s2) }), 'NO_SUCH_KEY', 0);
      expect(await read(ctx.store(), id, 'f', 'k')).toEqual({ value: 'two', sequence: s2 });
    });

    it('never matches a version of another segment', async () => {
      const a = await ctx.segment();
      const other = await ctx.segment();
      const s = await put(ctx.store(), a, 'f', 'k', 'v');
      await expectFailure(put(ctx.store(), a, 'f', 'k', 'w', { condition: version(other, s) }), 'BAD_KEY_VERSION', 0);
      await expectFailure(put(ctx.store(), a, 'f', 'absent', 'w', { condition: version(other, s) }), 'NO_SUCH_KEY', 0);
    });

    it('remove of a missing key succeeds unconditionally; conditional removes behave like replace', async () => {
      const id = await ctx.segment();
      const rm = (key: string, condition?: object) => ctx.store().update({ segmentId: id, modifications: [{ type: 'REMOVE', family: 'f', key: b(key), condition }] });
      expect((await rm('missing')).sequences).toEqual(['']);
      const s = await put(ctx.store(), id, 'f', 'k', 'v');
      await expectFailure(rm('k', version(id, String(BigInt(s) + 1n))), 'BAD_KEY_VERSION', 0);
      await expectFailure(rm('missing', version(id, s)), 'NO_SUCH_KEY', 0);
      await rm('k', version(id, s));
      expect(await read(ctx.store(), id, 'f', 'k')).toBeNull();
    });

    it('get reads many keys of any families in request order, found=false when absent', async () => {
      const id = await ctx.segment();
      const s1 = await put(ctx.store(), id, 'a', 'k', 'in a');
      const s2 = await put(ctx.store(), id, '', 'k', 'no family');
      const res = await ctx.store().get({
        segmentId: id,
        keys: [
          { family: '', key: b('k') },
          { family: 'b', key: b('k') },
          { family: 'a', key: b('k') },
        ],
      });
      expect(res.entries.map((e) => [e.found, Buffer.from(e.value).toString(), e.sequence])).toEqual([
        [true, 'no family', s2],
        [false, '', ''],
        [true, 'in a', s1],
      ]);
      expect(Buffer.from(res.entries[1].key).toString()).toBe('k');
    });

    it('a conditional check sees an update still waiting in the same group commit', async () => {
      const id = await ctx.segment();
      const insert = () => ctx.store().update({ segmentId: id, modifications: [{ type: 'INSERT', family: 'f', key: b('race'), value: b('v') }] });
      const results = await Promise.allSettled(Array.from({ length: 16 }, insert));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('BAD_KEY_VERSION');
    });

    it('lets exactly one of several racing replaces of one version win', async () => {
      const id = await ctx.segment();
      const s = await put(ctx.store(), id, 'f', 'k', 'base');
      const attempts = Array.from({ length: 12 }, (_, i) => put(ctx.store(), id, 'f', 'k', `w${i}`, { condition: version(id, s) }));
      const results = await Promise.allSettled(attempts);
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(won).toHaveLength(1);
      expect((await read(ctx.store(), id, 'f', 'k'))!.value).toBe(`w${won[0]}`);
    });

    it('hides an expired entry from get, iteration and conditions', async () => {
      const id = await ctx.segment();
      const t = ctx.target();
      const ttlMs = t.advanceClock ? 60_000 : 1;
      const s = await put(ctx.store(), id, 'f', 'short', 'v', { ttlMs: String(ttlMs) });
      await put(ctx.store(), id, 'f', 'long', 'v', { ttlMs: '3600000' });
      if (t.advanceClock) {
        expect(await read(ctx.store(), id, 'f', 'short')).not.toBeNull();
        t.advanceClock(ttlMs);
      } else {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await read(ctx.store(), id, 'f', 'short')).toBeNull();
      expect(await read(ctx.store(), id, 'f', 'long')).not.toBeNull();
      const page = await ctx.store().iterate({ segmentId: id, family: 'f' });
      expect(page.items.map((e) => Buffer.from(e.key).toString())).toEqual(['long']);
      await expectFailure(put(ctx.store(), id, 'f', 'short', 'w', { condition: version(id, s) }), 'NO_SUCH_KEY', 0);
      await ctx.store().update({ segmentId: id, modifications: [{ type: 'INSERT', family: 'f', key: b('short'), value: b('again') }] });
      expect((await read(ctx.store(), id, 'f', 'short'))!.value).toBe('again');
    });
  });
}

function batchesConformance(ctx: SuiteContext): void {
  describe('batches', () => {
    it('putAll writes atomically with versions in input order', async () => {
      const id = await ctx.segment();
      const res = await ctx.store().update({ segmentId: id, modifications: ['a', 'b', 'c'].map((k) => ({ family: 'f', key: b(k), value: b(k) })) });
      const seqs = res.sequences.map(BigInt);
      expect(seqs[0] < seqs[1] && seqs[1] < seqs[2]).toBe(true);
    });

    it('checks every condition against the state before the batch and writes nothing when one fails', async () => {
      const id = await ctx.segment();
      const s = await put(ctx.store(), id, 'f', 'x', 'old');
      const p = ctx.store().update({
        segmentId: id,
        modifications: [
          { type: 'PUT', family: 'f', key: b('x'), value: b('new'), condition: version(id, s) },
          { type: 'INSERT', family: 'f', key: b('y'), value: b('y') },
          { type: 'PUT', family: 'f', key: b('z'), value: b('z'), condition: { kind: 'NOT_EXISTS' } },
          { type: 'REMOVE', family: 'f', key: b('x2'), condition: version(id, s) },
        ],
      });
      await expectFailure(p, 'NO_SUCH_KEY', 3, `modifications[3]: the key does not exist in segment ${id}`);
      expect(await read(ctx.store(), id, 'f', 'x')).toEqual({ value: 'old', sequence: s });
      expect(await read(ctx.store(), id, 'f', 'y')).toBeNull();
      expect(await read(ctx.store(), id, 'f', 'z')).toBeNull();
    });

    it('update mixes insert, put, remove and removeRange; removes get "" sequences', async () => {
      const id = await ctx.segment();
      for (const k of ['r1', 'r2', 'r3', 's1']) await put(ctx.store(), id, 'p', k, k);
      const res = await ctx.store().update({
        segmentId: id,
        modifications: [
          { type: 'PUT', family: 'p', key: b('r9'), value: b('new, then removed by the range') },
          { type: 'REMOVE_RANGE', family: 'p', rangeFrom: b('r2'), rangeTo: b('s') },
          { type: 'INSERT', family: 'p', key: b('n1'), value: b('n1') },
          { type: 'REMOVE', family: 'p', key: b('s1') },
        ],
      });
      expect(res.sequences[1]).toBe('');
      expect(res.sequences[3]).toBe('');
      const page = await ctx.store().iterate({ segmentId: id, family: 'p' });
      expect(page.items.map((e) => Buffer.from(e.key).toString())).toEqual(['n1', 'r1']);
    });

    it('removeRange by prefix keeps other families and later keys of the same group commit', async () => {
      const id = await ctx.segment();
      for (const k of ['a1', 'a2', 'b1']) await put(ctx.store(), id, 'p', k, k);
      await put(ctx.store(), id, 'q', 'a1', 'other family');
      const range = ctx.store().update({ segmentId: id, modifications: [{ type: 'REMOVE_RANGE', family: 'p', rangePrefix: b('a') }] });
      const after = put(ctx.store(), id, 'p', 'a3', 'after the range');
      await Promise.all([range, after]);
      const keys = (await ctx.store().iterate({ segmentId: id, family: 'p' })).items.map((e) => Buffer.from(e.key).toString());
      expect(keys).toEqual(['a3', 'b1']);
      expect(await read(ctx.store(), id, 'q', 'a1')).not.toBeNull();
    });

    it('removeAll with conditions is all-or-nothing', async () => {
      const id = await ctx.segment();
      const s1 = await put(ctx.store(), id, 'f', 'a', 'a');
      const s2 = await put(ctx.store(), id, 'f', 'b', 'b');
      const rm = (seq2: string) =>
        ctx.store().update({
          segmentId: id,
          modifications: [
            { type: 'REMOVE', family: 'f', key: b('a'), condition: version(id, s1) },
            { type: 'REMOVE', family: 'f', key: b('b'), condition: version(id, seq2) },
          ],
        });
      await expectFailure(rm(s1), 'BAD_KEY_VERSION', 1);
      expect(await read(ctx.store(), id, 'f', 'a')).not.toBeNull();
      await rm(s2);
      expect(await read(ctx.store(), id, 'f', 'a')).toBeNull();
      expect(await read(ctx.store(), id, 'f', 'b')).toBeNull();
    });

    it('execute runs sub-requests independently and answers in request order', async () => {
      const id = await ctx.segment();
      const res = await ctx.store().execute({
        requests: [
          { update: { segmentId: id, modifications: [{ family: 'f', key: b('k'), value: b('v') } as never] } },
          { update: { segmentId: id, modifications: [{ type: 'INSERT', family: 'f', key: b('k'), value: b('w') } as never] } },
          { get: { segmentId: id, keys: [{ family: 'f', key: b('k') }] } },
          { update: { segmentId: '424242', modifications: [{ family: 'f', key: b('k'), value: b('v') } as never] } },
        ],
      });
      expect(res.responses).toHaveLength(4);
      // The answer of an update is its first sequence (the one PUT's), not one sequence per modification.
      expect(res.responses[0].update).toEqual({ sequences: [], firstSequence: expect.stringMatching(/^[1-9][0-9]*$/) });
      expect(res.responses[1].error).toMatchObject({ code: 'BAD_KEY_VERSION', index: 0, segmentId: id });
      expect(res.responses[2].get!.entries[0].found).toBe(true);
      expect(res.responses[3].error).toMatchObject({ code: 'SEGMENT_NOT_FOUND', segmentId: '424242' });
    });
  });
}
