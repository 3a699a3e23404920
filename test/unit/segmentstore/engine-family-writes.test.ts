/**
 * Writes of keyed families that the family stager reshapes: a batch sent out of key order is merged
 * sorted but versioned in the order sent, and a family whose first chunk is emptied while later
 * chunks remain keeps that chunk (empty) as its anchor, so a reopened store still finds the family.
 */
import { describe, expect, it } from 'vitest';
import { MAX_CHUNK_ENTRIES } from '../../../segmentstore/storage/chunks/chunk-codec';
import type { ModificationInput } from '../../../segmentstore/storage/validation';
import { scratchEngines } from '../../harness/scratch-engines';

const SEG = '4';
const b = (s: string): Buffer => Buffer.from(s);
const key = (i: number): Buffer => b(`k${String(i).padStart(4, '0')}`);

const { location, open } = scratchEngines('kvt-family-writes-');

describe('a keyed batch sent out of key order', () => {
  it('stores each key with the version the update returned for it, and that version matches a condition', async () => {
    const engine = await open(location());
    await engine.createSegment(SEG);
    const sent = ['m', 'c', 'x', 'a'];
    const res = await engine.update({ segmentId: SEG, modifications: sent.map((k) => ({ family: 'f', key: b(k), value: b(`v-${k}`) })) });
    // Versions follow the order sent.
    expect(res.sequences.map(Number)).toEqual([1, 2, 3, 4].map((n) => Number(res.sequences[0]) + n - 1));
    const got = await engine.get({ segmentId: SEG, keys: sent.map((k) => ({ family: 'f', key: b(k) })) });
    expect(got.entries.map((e) => e.sequence)).toEqual(res.sequences);
    // Each returned version is the one a conditional replace of its key must name.
    const replace = sent.map((k, i) => ({ family: 'f', key: b(k), value: b('next'), condition: { kind: 'VERSION', segmentId: SEG, sequence: res.sequences[i] } as const }));
    await expect(engine.update({ segmentId: SEG, modifications: replace.reverse() })).resolves.toBeDefined();
  });
});

describe('a family whose first chunk is emptied while later chunks remain', () => {
  it.each([
    ['a range removal', (): ModificationInput[] => [{ type: 'REMOVE_RANGE', family: 'f', rangeTo: key(MAX_CHUNK_ENTRIES) }]],
    ['removals of its keys', (): ModificationInput[] => Array.from({ length: MAX_CHUNK_ENTRIES }, (_, i) => ({ type: 'REMOVE', family: 'f', key: key(i) }))],
  ])('keeps its later keys readable after a reopen (%s)', async (_, removal) => {
    const where = location();
    let engine = await open(where);
    await engine.createSegment(SEG);
    // A full first chunk, then appended keys: a second chunk.
    const fill = (from: number, to: number): ModificationInput[] => Array.from({ length: to - from }, (_, i) => ({ family: 'f', key: key(from + i), value: b(`v${from + i}`) }));
    await engine.update({ segmentId: SEG, modifications: fill(0, MAX_CHUNK_ENTRIES) });
    await engine.update({ segmentId: SEG, modifications: fill(MAX_CHUNK_ENTRIES, MAX_CHUNK_ENTRIES + 5) });
    await engine.update({ segmentId: SEG, modifications: removal() });
    await engine.close();

    engine = await open(where);
    const later = [MAX_CHUNK_ENTRIES, MAX_CHUNK_ENTRIES + 4].map(key);
    const got = await engine.get({ segmentId: SEG, keys: [key(0), ...later].map((k) => ({ family: 'f', key: k })) });
    expect(got.entries.map((e) => (e.found ? Buffer.from(e.value).toString() : null))).toEqual([null, `v${MAX_CHUNK_ENTRIES}`, `v${MAX_CHUNK_ENTRIES + 4}`]);
    const page = await engine.iterate({ segmentId: SEG, family: 'f', maxItems: 100 });
    expect(page.items.map((i) => Buffer.from(i.key).toString())).toEqual(Array.from({ length: 5 }, (_, i) => key(MAX_CHUNK_ENTRIES + i).toString()));
    expect(page.done).toBe(true);
  });
});
