/**
 * Families found by their first chunk (issue 37): a family's first chunk, stored under the family's
 * prefix, is marked when it is the family's only chunk, so writers and readers whose directory of the
 * family is not in memory find the whole family by one exact get instead of a seek. These check the
 * mark as stored through splits and removals, reads of families whose directory is not cached
 * (several chunks, keys above the first chunk's last, expired entries, many keys of one chunk in one
 * Get), many families created at once with directories evicted at every turn, and a data directory
 * of format 3 (no marks) opened, read, written and stamped 4.
 */
import { describe, expect, it } from 'vitest';
import { ClassicLevel } from 'classic-level';
import { chunkCount, isSoleChunk, markSole, MAX_CHUNK_ENTRIES } from '../../../segmentstore/storage/chunks/chunk-codec';
import { encodeSegmentId, familyPrefix, prefixSuccessor, segmentDataPrefix } from '../../../segmentstore/storage/key-codec';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../../segmentstore/storage/segments/segment-state';
import type { ModificationInput } from '../../../segmentstore/storage/validation';
import { mulberry32 } from '../../harness/oracle';
import { scratchEngines } from '../../harness/scratch-engines';

const SEG = '5';
const b = (s: string): Buffer => Buffer.from(s);
const key = (i: number): Buffer => b(`k${String(i).padStart(4, '0')}`);
const prefixOf = (family: string): Buffer => familyPrefix(segmentDataPrefix(encodeSegmentId(SEG)), family);

const scratch = scratchEngines('kvt-heads-');
const location = scratch.location;

async function open(where: string, options: SegmentEngineOptions = {}, create = true): Promise<SegmentEngine> {
  const engine = await scratch.open(where, options);
  if (create) await engine.createSegment(SEG);
  return engine;
}

function puts(family: string, from: number, to: number, value = (i: number) => b(`v${i}`)): ModificationInput[] {
  const mods: ModificationInput[] = [];
  for (let i = from; i < to; i++) mods.push({ family, key: key(i), value: value(i) });
  return mods;
}

/** The family's chunk records as stored: [lower key, sole mark, entry count]. */
async function storedChunks(where: string, family: string): Promise<[string, boolean, number][]> {
  const db = new ClassicLevel<Buffer, Buffer>(where, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  try {
    const prefix = prefixOf(family);
    const records = await db.iterator({ gte: prefix, lt: prefixSuccessor(prefix) }).all();
    return records.map(([k, v]) => [k.subarray(prefix.length).toString(), isSoleChunk(v), chunkCount(v)]);
  } finally {
    await db.close();
  }
}

async function values(engine: SegmentEngine, family: string, keys: Buffer[]): Promise<(string | null)[]> {
  const { entries } = await engine.get({ segmentId: SEG, keys: keys.map((k) => ({ family, key: k })) });
  return entries.map((e) => (e.found ? Buffer.from(e.value).toString() : null));
}

describe('the first chunk of a family', () => {
  it('is marked sole while it is the only chunk, through a split that keeps its record and removals', async () => {
    const where = location();
    let engine = await open(where);
    await engine.update({ segmentId: SEG, modifications: puts('f', 0, 1) });
    await engine.update({ segmentId: SEG, modifications: puts('g', 0, MAX_CHUNK_ENTRIES) });
    await engine.close();
    expect(await storedChunks(where, 'f')).toEqual([['', true, 1]]);
    expect(await storedChunks(where, 'g')).toEqual([['', true, MAX_CHUNK_ENTRIES]]);

    // Appending past a full chunk fills new chunks and keeps the first record: it is staged again, unmarked.
    engine = await open(where, {}, false);
    await engine.update({ segmentId: SEG, modifications: puts('g', MAX_CHUNK_ENTRIES, MAX_CHUNK_ENTRIES + 5) });
    await engine.close();
    const split = await storedChunks(where, 'g');
    expect(split.map(([, sole]) => sole)).toEqual([false, false]);
    expect(split.map(([, , n]) => n)).toEqual([MAX_CHUNK_ENTRIES, 5]);

    // Back to one chunk: readers and writers still find every key (a first chunk without the mark only costs a seek).
    engine = await open(where, {}, false);
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE_RANGE', family: 'g', rangeFrom: key(MAX_CHUNK_ENTRIES) }] });
    await engine.close();
    expect((await storedChunks(where, 'g')).length).toBe(1);
    engine = await open(where, {}, false);
    try {
      expect(await values(engine, 'g', [key(0), key(MAX_CHUNK_ENTRIES - 1), key(MAX_CHUNK_ENTRIES)])).toEqual(['v0', `v${MAX_CHUNK_ENTRIES - 1}`, null]);
      await engine.update({ segmentId: SEG, modifications: [{ family: 'g', key: key(3), value: b('again') }] });
    } finally {
      await engine.close();
    }
    expect(await storedChunks(where, 'g')).toEqual([['', true, MAX_CHUNK_ENTRIES]]);

    // Emptied: no record at all.
    engine = await open(where, {}, false);
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE_RANGE', family: 'g' }] });
    await engine.close();
    expect(await storedChunks(where, 'g')).toEqual([]);
  });
});

describe('point reads of families whose directory is not in memory', () => {
  it('answer from the first chunk, or the floor chunk for keys above it, from a reopened store', async () => {
    const where = location();
    let engine = await open(where);
    const big = (i: number): Buffer => Buffer.alloc(3000, `b${i}`);
    await engine.update({ segmentId: SEG, modifications: puts('many', 0, 40, big) });
    await engine.update({ segmentId: SEG, modifications: puts('one', 10, 20) });
    await engine.close();
    expect((await storedChunks(where, 'many')).length).toBeGreaterThan(2);
    engine = await open(where, {}, false);
    try {
      const wanted = [key(0), key(39), key(17), key(40), key(5), key(17), b('a')];
      const got = await values(engine, 'many', wanted);
      expect(got.map((v) => (v === null ? null : v.slice(0, 3)))).toEqual(['b0b', 'b39', 'b17', null, 'b5b', 'b17', null]);
      expect(await values(engine, 'one', [key(9), key(10), key(15), key(19), key(20)])).toEqual([null, 'v10', 'v15', 'v19', null]);
      expect(await values(engine, 'none', [key(1)])).toEqual([null]);
    } finally {
      await engine.close();
    }
  });

  it('leave out expired entries, and answer many keys of one chunk in one Get', async () => {
    const where = location();
    let now = 1_000_000;
    let engine = await open(where, { clock: () => now });
    const mods = puts('f', 0, 100).map((m, i) => (i % 3 === 0 ? { ...m, ttlMs: 1_000 } : m));
    await engine.update({ segmentId: SEG, modifications: mods });
    await engine.close();
    now += 5_000;
    engine = await open(where, { clock: () => now }, false);
    try {
      const keys = Array.from({ length: 120 }, (_, i) => key((i * 7) % 110));
      const got = await values(engine, 'f', keys);
      expect(got).toEqual(
        keys.map((k) => {
          const i = Number(k.toString().slice(1));
          return i >= 100 || i % 3 === 0 ? null : `v${i}`;
        }),
      );
    } finally {
      await engine.close();
    }
  });
});

describe('families created many at a time', () => {
  for (const [name, options] of [
    ['directory budget 1 byte, chunk cache 1 byte', { directoryCacheBytes: 1, chunkCacheBytes: 1 }],
    ['default caches', {}],
  ] as const) {
    it(`keep every acknowledged write, several per family in one flush (${name})`, async () => {
      const engine = await open(location(), { maxFlushOps: 32, maxHoldMs: 1000, ...options });
      try {
        const rand = mulberry32(5);
        const model = new Map<string, Map<string, string>>();
        for (let round = 0; round < 25; round++) {
          const updates: ModificationInput[][] = [];
          for (let u = 0; u < 40; u++) {
            // Mostly new families; some named again within the round or from an earlier one.
            const family = rand() < 0.6 ? `r${round}-${u}` : rand() < 0.5 ? `r${round}-${Math.floor(rand() * u)}` : `r${Math.floor(rand() * (round + 1))}-${Math.floor(rand() * 40)}`;
            const k = Math.floor(rand() * 150);
            const n = rand() < 0.1 ? 60 : 1 + Math.floor(rand() * 3);
            const mods = puts(family, k, k + n, (i) => b(`${round}.${u}.${i}`));
            if (rand() < 0.1) mods.push({ type: 'REMOVE', family, key: key(k + n + 1) });
            updates.push(mods);
            const f = model.get(family) ?? new Map<string, string>();
            model.set(family, f);
            for (const m of mods) if (m.type !== 'REMOVE') f.set(Buffer.from(m.key!).toString(), Buffer.from(m.value!).toString());
            for (const m of mods) if (m.type === 'REMOVE') f.delete(Buffer.from(m.key!).toString());
          }
          const sent =
            rand() < 0.5
              ? engine.withHeldCommits((update) => updates.map((modifications) => update({ segmentId: SEG, modifications })))
              : updates.map((modifications) => engine.update({ segmentId: SEG, modifications }));
          const outcomes = await Promise.all(sent);
          const sequences = outcomes.map((o) => o.firstSequence);
          expect(new Set(sequences).size).toBe(sequences.length);
        }
        for (const [family, entries] of model) {
          const keys = [...entries.keys()];
          expect(await values(engine, family, keys.map(b)), family).toEqual(keys.map((k) => entries.get(k)!));
          const page = await engine.iterate({ segmentId: SEG, family, maxItems: 1000 });
          expect(
            page.items.map((i) => Buffer.from(i.key).toString()),
            family,
          ).toEqual([...keys].sort());
        }
      } finally {
        await engine.close();
      }
    }, 120_000);
  }
});

describe('a data directory of format 3', () => {
  it('is read and written as before, stamped 4, and its families marked as they are written', async () => {
    const where = location();
    let engine = await open(where);
    await engine.update({ segmentId: SEG, modifications: puts('small', 0, 5) });
    await engine.update({ segmentId: SEG, modifications: puts('large', 0, 200) });
    await engine.update({ segmentId: SEG, modifications: puts('large', 200, 300) });
    await engine.close();
    // What a format-3 store wrote: the same records, no mark.
    const db = new ClassicLevel<Buffer, Buffer>(where, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    const data = segmentDataPrefix(encodeSegmentId(SEG));
    for (const [k, v] of await db.iterator({ gte: data, lt: prefixSuccessor(data) }).all()) {
      markSole(v, false);
      await db.put(k, v);
    }
    await db.put(b('m'), b('3'));
    await db.close();
    expect((await storedChunks(where, 'small'))[0][1]).toBe(false);

    engine = await open(where, {}, false);
    try {
      expect(await values(engine, 'small', [key(0), key(4), key(5)])).toEqual(['v0', 'v4', null]);
      expect(await values(engine, 'large', [key(0), key(150), key(299), key(300)])).toEqual(['v0', 'v150', 'v299', null]);
      await engine.update({ segmentId: SEG, modifications: [{ family: 'small', key: key(9), value: b('new') }] });
      await engine.update({ segmentId: SEG, modifications: [{ family: 'large', key: key(301), value: b('new') }] });
      expect(await values(engine, 'small', [key(9)])).toEqual(['new']);
      expect((await engine.iterate({ segmentId: SEG, family: 'large', maxItems: 1000 })).items).toHaveLength(301);
    } finally {
      await engine.close();
    }
    expect(await storedChunks(where, 'small')).toEqual([['', true, 6]]);
    const after = new ClassicLevel<Buffer, Buffer>(where, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    expect((await after.get(b('m')))?.toString()).toBe('4');
    await after.close();
  });
});
