/**
 * Keyed families are stored in chunks (segmentstore/storage/chunk-codec.ts). This drives the engine
 * with random updates that split, empty and refill chunks (large families, values from a few bytes
 * to over a chunk), range removals across chunks, conditional writes and expiry, and checks every
 * read path (get, iterate with bounds in both directions and resumed pages, scan, info) against an
 * in-memory model after each round, and again after reopening the LevelDB.
 */
import { describe, expect, it } from 'vitest';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { mulberry32 } from '../../harness/oracle';
import { tempDir } from '../../harness/process';
import { scratchEngines } from '../../harness/scratch-engines';
import { MAX_CHUNK_BYTES, MAX_CHUNK_ENTRIES, decodeChunk, encodeChunk, splitChunk, ChunkEntry } from '../../../segmentstore/storage/chunks/chunk-codec';
import { encodeSegmentId, familyOf, prefixSuccessor, segmentDataPrefix } from '../../../segmentstore/storage/key-codec';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../../segmentstore/storage/segments/segment-state';
import type { IterateInput } from '../../../segmentstore/storage/read/read-validation';
import type { ModificationInput } from '../../../segmentstore/storage/validation';
import { encodeIterateResponse } from '../../../segmentstore/service/wire-codec';
import { storedChunkLowers } from '../../harness/chunk-workload';
import { iterateForWire } from '../../../segmentstore/service/wire-page-sink';

const SEG = '3';

/**
 * engine.iterate, checking on the way that the page the gRPC service sends (iterateForWire, written
 * straight from the chunk records) is byte for byte the encoding of that page.
 */
async function iterateBoth(engine: SegmentEngine, req: IterateInput) {
  const page = await engine.iterate(req);
  const wire = await iterateForWire(engine, req);
  expect(Buffer.isBuffer(wire)).toBe(true);
  expect((wire as Buffer).equals(encodeIterateResponse(page))).toBe(true);
  return page;
}

interface ModelEntry {
  value: Buffer;
  sequence: string;
  expiresAt: number;
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

class Model {
  readonly families = new Map<string, Map<string, ModelEntry>>();
  constructor(private readonly clock: () => number) {}

  family(f: string): Map<string, ModelEntry> {
    let m = this.families.get(f);
    if (!m) this.families.set(f, (m = new Map()));
    return m;
  }

  live(f: string, key: Uint8Array): ModelEntry | undefined {
    const e = this.families.get(f)?.get(hex(key));
    return e && (e.expiresAt === 0 || e.expiresAt > this.clock()) ? e : undefined;
  }

  /** Live keys of `f`, ascending. */
  keys(f: string): Buffer[] {
    const out: Buffer[] = [];
    for (const k of this.families.get(f)?.keys() ?? []) {
      const key = Buffer.from(k, 'hex');
      if (this.live(f, key)) out.push(key);
    }
    return out.sort(Buffer.compare);
  }
}

describe('chunk codec', () => {
  it('round-trips entries and splits over-full chunks evenly within the limits', () => {
    const entries: ChunkEntry[] = Array.from({ length: 300 }, (_, i) => ({
      key: Buffer.from(`k${String(i).padStart(4, '0')}`),
      sequence: 2 ** 40 + i,
      expiresAt: i % 3 === 0 ? 0 : 1_700_000_000_000 + i,
      value: Buffer.alloc(i % 7 === 0 ? MAX_CHUNK_BYTES + 10 : 50, i),
    }));
    const decoded = decodeChunk(encodeChunk(entries));
    expect(decoded.map((e) => [e.key.toString(), e.sequence, e.expiresAt, e.value.length])).toEqual(entries.map((e) => [e.key.toString(), e.sequence, e.expiresAt, e.value.length]));
    const pieces = splitChunk(entries);
    expect(pieces.flat().map((e) => e.key.toString())).toEqual(entries.map((e) => e.key.toString()));
    for (const p of pieces) {
      expect(p.length).toBeGreaterThan(0);
      expect(p.length).toBeLessThanOrEqual(MAX_CHUNK_ENTRIES);
      const bytes = p.reduce((n, e) => n + 22 + e.key.length + e.value.length, 0);
      if (p.length > 1) expect(bytes).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
    }
    expect(splitChunk(entries.slice(1, 7))).toHaveLength(1);
  });
});

describe('SegmentEngine over chunked families', () => {
  const scratch = scratchEngines('kvt-chunks-');
  /** An engine in a temp dir (closed and removed after the test) with segment SEG created. */
  async function engineWithSegment(options: SegmentEngineOptions = {}): Promise<SegmentEngine> {
    const engine = await scratch.open(undefined, options);
    await engine.createSegment(SEG);
    return engine;
  }

  it('matches a model through random splits, range removals, conditions, expiry and a reopen', async () => {
    const location = scratch.location();
    let now = 1_700_000_000_000;
    const clock = (): number => now;
    let engine = await scratch.open(location, { clock, chunkCacheBytes: 256 * 1024 });
    await engine.createSegment(SEG);
    const model = new Model(clock);
    const rand = mulberry32(42);
    const families = ['a', 'b', 'wide family', 'z'];
    const keyOf = (n: number): Buffer => Buffer.from(`key-${String(n).padStart(5, '0')}`);
    const valueOf = (): Buffer => {
      const r = rand();
      const size = r < 0.02 ? MAX_CHUNK_BYTES + Math.floor(rand() * 4000) : r < 0.2 ? 1000 + Math.floor(rand() * 3000) : Math.floor(rand() * 120);
      return Buffer.alloc(size, Math.floor(rand() * 256));
    };
    let conflicts = 0;
    let sortedBatches = 0;

    async function round(updates: number): Promise<void> {
      for (let u = 0; u < updates; u++) {
        const family = families[Math.floor(rand() * families.length)];
        const r = rand();
        const mods: ModificationInput[] = [];
        if (r < 0.05) {
          // Range removal of a random key interval (sometimes by prefix).
          const lo = Math.floor(rand() * 2000);
          const hi = lo + Math.floor(rand() * 400);
          const byPrefix = rand() < 0.3;
          mods.push(
            byPrefix ? { type: 'REMOVE_RANGE', family, rangePrefix: Buffer.from(`key-00${Math.floor(rand() * 20)}`) } : { type: 'REMOVE_RANGE', family, rangeFrom: keyOf(lo), rangeTo: keyOf(hi) },
          );
        } else {
          const count = r < 0.3 ? 1 + Math.floor(rand() * 200) : 1 + Math.floor(rand() * 5);
          const base = Math.floor(rand() * 2000);
          const seen = new Set<number>();
          for (let i = 0; i < count; i++) {
            const n = rand() < 0.7 ? base + i : Math.floor(rand() * 2000);
            if (seen.has(n)) continue;
            seen.add(n);
            const key = keyOf(n);
            const t = rand();
            if (t < 0.15) mods.push({ type: 'REMOVE', family, key });
            else if (t < 0.2) mods.push({ type: 'INSERT', family, key, value: valueOf() });
            else if (t < 0.25) {
              const cur = model.live(family, key);
              mods.push({ type: 'PUT', family, key, value: valueOf(), condition: cur ? { kind: 'VERSION', segmentId: SEG, sequence: cur.sequence } : { kind: 'NOT_EXISTS' } });
            } else mods.push({ type: 'PUT', family, key, value: valueOf(), ttlMs: rand() < 0.05 ? 1000 : 0 });
          }
        }
        // Half the batches name their keys in ascending order (the merge path of chunk-merge.ts),
        // the rest in any order (sorted for the merge by the engine; the map path of chunk-work.ts
        // when the batch removes a range).
        if (mods.length > 1 && mods[0].type !== 'REMOVE_RANGE' && rand() < 0.5) {
          mods.sort((a, b) => Buffer.compare(a.key!, b.key!));
          sortedBatches++;
        }
        try {
          const res = await engine.update({ segmentId: SEG, modifications: mods });
          applyToModel(family, mods, res.sequences);
        } catch (err) {
          // INSERT of a live key: the whole batch must have been refused, naming the first such
          // modification in the order sent (whatever order the engine merged the keys in).
          expect((err as { code?: string }).code).toBe('BAD_KEY_VERSION');
          expect((err as { index?: number }).index).toBe(mods.findIndex((m) => m.type === 'INSERT' && model.live(family, m.key!) !== undefined));
          conflicts++;
        }
      }
    }

    function applyToModel(family: string, mods: ModificationInput[], sequences: string[]): void {
      const fam = model.family(family);
      mods.forEach((m, i) => {
        if (m.type === 'REMOVE_RANGE') {
          for (const k of [...fam.keys()]) {
            const key = Buffer.from(k, 'hex');
            const inRange = m.rangePrefix ? key.subarray(0, m.rangePrefix.length).equals(m.rangePrefix) : Buffer.compare(key, m.rangeFrom!) >= 0 && Buffer.compare(key, m.rangeTo!) < 0;
            if (inRange) fam.delete(k);
          }
        } else if (m.type === 'REMOVE') fam.delete(hex(Buffer.from(m.key!)));
        else fam.set(hex(Buffer.from(m.key!)), { value: Buffer.from(m.value!), sequence: sequences[i], expiresAt: m.ttlMs ? now + Number(m.ttlMs) : 0 });
      });
    }

    async function verify(): Promise<void> {
      let total = 0;
      for (const family of families) {
        const keys = model.keys(family);
        total += keys.length;
        // Point reads of live and absent keys.
        const probe = [...keys.filter(() => rand() < 0.2), keyOf(5000), keyOf(Math.floor(rand() * 2000))];
        const got = await engine.get({ segmentId: SEG, keys: probe.map((key) => ({ family, key })) });
        got.entries.forEach((e, i) => {
          const want = model.live(family, probe[i]);
          expect(e.found, `${family}/${probe[i]}`).toBe(!!want);
          if (want) {
            expect(e.sequence).toBe(want.sequence);
            expect(Buffer.compare(e.value, want.value)).toBe(0);
          }
        });
        // Whole family both ways, in pages.
        for (const reverse of [false, true]) {
          const pageSize = 1 + Math.floor(rand() * 150);
          const seen: Buffer[] = [];
          let after: Buffer | undefined;
          for (let guard = 0; guard < 10_000; guard++) {
            const withValues = rand() < 0.8;
            const page = await iterateBoth(engine, { segmentId: SEG, family, maxItems: pageSize, reverse, includeValues: withValues, hasAfter: after !== undefined, after });
            for (const item of page.items) {
              const want = model.live(family, item.key);
              expect(want, `unexpected ${item.key.toString()}`).toBeDefined();
              expect(item.sequence).toBe(want!.sequence);
              expect(Buffer.compare(item.value, withValues ? want!.value : Buffer.alloc(0))).toBe(0);
              seen.push(Buffer.from(item.key));
            }
            if (page.done) break;
            expect(page.items).toHaveLength(pageSize);
            after = seen[seen.length - 1];
          }
          const want = reverse ? [...keys].reverse() : keys;
          expect(seen.map((k) => k.toString())).toEqual(want.map((k) => k.toString()));
        }
        // Bounded ranges.
        for (let b = 0; b < 4; b++) {
          const lo = keyOf(Math.floor(rand() * 2000));
          const hi = keyOf(Math.floor(rand() * 2000) + 100);
          const toInclusive = rand() < 0.5;
          const reverse = rand() < 0.5;
          const page = await iterateBoth(engine, { segmentId: SEG, family, from: lo, to: hi, toInclusive, reverse, maxItems: 10_000 });
          let want = keys.filter((k) => Buffer.compare(k, lo) >= 0 && (toInclusive ? Buffer.compare(k, hi) <= 0 : Buffer.compare(k, hi) < 0));
          if (reverse) want = want.reverse();
          expect(page.items.map((i) => i.key.toString())).toEqual(want.map((k) => k.toString()));
          expect(page.done).toBe(true);
        }
      }
      // A scan of the whole segment in pages, and the totals.
      let scanned = 0;
      let after: Uint8Array = Buffer.alloc(0);
      for (let guard = 0; guard < 10_000; guard++) {
        const page = await engine.scan({ segmentId: SEG, maxItems: 97, includeValues: false, after });
        for (const item of page.items) {
          expect(model.live(item.family, item.key), `scan ${item.family}/${item.key.toString()}`).toBeDefined();
        }
        scanned += page.items.length;
        after = page.position;
        if (page.done) break;
      }
      expect(scanned).toBe(total);
      const info = await engine.segmentInfo(SEG);
      expect(Number(info.entryCount)).toBe(total);
    }

    for (let r = 0; r < 6; r++) {
      await round(150);
      if (r === 2) now += 2_000; // entries with a 1 s TTL expire
      await verify();
      if (r === 3) {
        expect(await engine.sweepExpired()).toBeGreaterThanOrEqual(0);
        await verify();
      }
    }
    // The families really were split into many chunks, and something was refused.
    expect(model.keys('a').length).toBeGreaterThan(MAX_CHUNK_ENTRIES);
    expect(conflicts).toBeGreaterThan(0);
    expect(sortedBatches).toBeGreaterThan(100);

    await engine.close();
    engine = await scratch.open(location, { clock });
    await verify();
    // Emptying a family removes every record of it.
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE_RANGE', family: 'a' }] });
    model.families.delete('a');
    await verify();
    const page = await engine.iterate({ segmentId: SEG, family: 'a', maxItems: 10 });
    expect(page).toEqual({ items: [], done: true });
  }, 120_000);

  it('stamps its storage format and refuses a database written in another one', async () => {
    const dir = tempDir('kvt-chunks-');
    scratch.defer(dir.dispose);
    const fresh = path.join(dir.path, 'fresh');
    const engine = await SegmentEngine.open(fresh, { expirySweepIntervalMs: 0 });
    await engine.close();
    const reopened = await SegmentEngine.open(fresh, { expirySweepIntervalMs: 0 });
    await reopened.close();
    const old = path.join(dir.path, 'old');
    const db = new ClassicLevel<string, string>(old);
    await db.put('d-an-old-entry', 'v');
    await db.close();
    await expect(SegmentEngine.open(old)).rejects.toThrow(/holds kvt storage format 1 .*reads formats 2, 3 and 4 only/);
    const future = path.join(dir.path, 'future');
    const stamped = new ClassicLevel<Buffer, Buffer>(future, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await stamped.put(Buffer.from('m'), Buffer.from('5'));
    await stamped.close();
    await expect(SegmentEngine.open(future)).rejects.toThrow(/holds kvt storage format 5; this segment store reads formats 2, 3 and 4 only/);
  });

  it('opens a database of format 2 (before the durable log) with its data, and stamps it 4', async () => {
    const location = scratch.location();
    // Written without a log (LevelDB alone, as format 2 did), then stamped 2.
    const engine = await SegmentEngine.open(location, { expirySweepIntervalMs: 0, logBytes: 0 });
    await engine.createSegment(SEG);
    await engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: Buffer.from('k'), value: Buffer.from('v') }] });
    await engine.close();
    const db = new ClassicLevel<Buffer, Buffer>(location, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.put(Buffer.from('m'), Buffer.from('2'));
    await db.close();
    const upgraded = await SegmentEngine.open(location, { expirySweepIntervalMs: 0 });
    try {
      const got = await upgraded.get({ segmentId: SEG, keys: [{ family: 'f', key: Buffer.from('k') }] });
      expect(Buffer.from(got.entries[0].value).toString()).toBe('v');
    } finally {
      await upgraded.close();
    }
    const after = new ClassicLevel<Buffer, Buffer>(location, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    expect((await after.get(Buffer.from('m')))?.toString()).toBe('4');
    await after.close();
  });

  it('appends large values (revisions) without rewriting the full chunk before them', async () => {
    const engine = await engineWithSegment();
    const revision = (n: number): ModificationInput => ({ family: 'Main_Page', key: Buffer.from(`rev-${String(n).padStart(6, '0')}`), value: Buffer.alloc(MAX_CHUNK_BYTES + 100, n) });
    await engine.update({ segmentId: SEG, modifications: [revision(1)] });
    for (let n = 2; n <= 5; n++) {
      const before = engine.commitStats.ops;
      await engine.update({ segmentId: SEG, modifications: [revision(n)] });
      // The new revision's chunk and the segment's sequence record: nothing else is written, but for
      // the first chunk once, as the family stops being one chunk (its sole-chunk mark is cleared).
      expect(engine.commitStats.ops - before).toBe(n === 2 ? 3 : 2);
    }
    const page = await engine.iterate({ segmentId: SEG, family: 'Main_Page', maxItems: 10, includeValues: true });
    expect(page.items.map((i) => [i.key.toString(), i.value[0]])).toEqual([1, 2, 3, 4, 5].map((n) => [`rev-${String(n).padStart(6, '0')}`, n]));
  });

  it('checks the conditions of an ascending batch in order, and writes nothing when one fails', async () => {
    const engine = await engineWithSegment();
    const key = (n: number): Buffer => Buffer.from(`k${String(n).padStart(4, '0')}`);
    // 250 entries: more than one chunk.
    const first = await engine.update({ segmentId: SEG, modifications: Array.from({ length: 250 }, (_, i) => ({ family: 'f', key: key(i * 2), value: Buffer.alloc(60, i) })) });
    const v10 = first.sequences[5];
    const attempt = async (mods: ModificationInput[]) =>
      engine.update({ segmentId: SEG, modifications: mods }).then(
        () => undefined,
        (err: { code: string; index: number }) => [err.code, err.index],
      );
    // Failing: [1] INSERT of a stored key, [3] NOT_EXISTS of a stored key (in a later chunk); [0], [2] and [4] would pass.
    expect(
      await attempt([
        { family: 'f', key: key(1), value: Buffer.from('new') },
        { family: 'f', key: key(10), type: 'INSERT', value: Buffer.from('x') },
        { family: 'f', key: key(11), condition: { kind: 'NOT_EXISTS' }, value: Buffer.from('y') },
        { family: 'f', key: key(400), condition: { kind: 'NOT_EXISTS' }, value: Buffer.from('z') },
        { family: 'f', key: key(999), value: Buffer.from('w') },
      ]),
    ).toEqual(['BAD_KEY_VERSION', 1]);
    expect(
      await attempt([
        { family: 'f', key: key(10), condition: { kind: 'VERSION', segmentId: SEG, sequence: v10 }, value: Buffer.from('ok') },
        { family: 'f', key: key(11), type: 'REMOVE', condition: { kind: 'VERSION', segmentId: SEG, sequence: '1' } },
      ]),
    ).toEqual(['NO_SUCH_KEY', 1]);
    const got = await engine.get({ segmentId: SEG, keys: [1, 10, 400, 999].map((n) => ({ family: 'f', key: key(n) })) });
    expect(got.entries.map((e) => e.found)).toEqual([false, true, true, false]);
    expect(got.entries[1].sequence).toBe(v10);
    // A passing ascending batch across chunks: removals, a conditional replace, inserts between and after.
    const res = await engine.update({
      segmentId: SEG,
      modifications: [
        { family: 'f', key: key(0), type: 'REMOVE' },
        { family: 'f', key: key(3), type: 'INSERT', value: Buffer.from('three') },
        { family: 'f', key: key(10), condition: { kind: 'VERSION', segmentId: SEG, sequence: v10 }, value: Buffer.from('ten') },
        { family: 'f', key: key(401), type: 'REMOVE' },
        { family: 'f', key: key(498), type: 'REMOVE' },
        { family: 'f', key: key(700), value: Buffer.from('end') },
      ],
    });
    expect(res.sequences.map((s) => s !== '')).toEqual([false, true, true, false, false, true]);
    const page = await engine.iterate({ segmentId: SEG, family: 'f', maxItems: 1000, includeValues: true });
    const want = new Map<string, string>(Array.from({ length: 250 }, (_, i) => [key(i * 2).toString(), Buffer.alloc(60, i).toString('hex')]));
    want.delete(key(0).toString());
    want.delete(key(498).toString());
    want.set(key(3).toString(), Buffer.from('three').toString('hex'));
    want.set(key(10).toString(), Buffer.from('ten').toString('hex'));
    want.set(key(700).toString(), Buffer.from('end').toString('hex'));
    expect(page.items.map((i) => [i.key.toString(), Buffer.from(i.value).toString('hex')])).toEqual([...want].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  });

  it('writes an ascending batch whose keys lie chunks apart in a family of many chunks', async () => {
    const engine = await engineWithSegment({ logBytes: 0 });
    const key = (n: number): string => `k${String(n).padStart(5, '0')}`;
    const model = new Map<string, string>();
    const load: ModificationInput[] = [];
    for (let i = 0; i < 3_000; i++) {
      model.set(key(i * 2), `v${i}`.padEnd(100, '.'));
      load.push({ family: 'f', key: Buffer.from(key(i * 2)), value: Buffer.from(model.get(key(i * 2))!) });
    }
    for (let i = 0; i < load.length; i += 250) await engine.update({ segmentId: SEG, modifications: load.slice(i, i + 250) });
    const lowers = await storedChunkLowers(engine, SEG, 'f');
    expect(lowers.length).toBeGreaterThanOrEqual(20);
    // Ascending keys: before the first chunk, a chunk's exact lower key, a new key just below another
    // chunk's, a neighbour right after that jump, keys of the middle chunk removed, the last chunk's lower
    // key, and past the end. Each lands in the chunk its key belongs to, wherever the one before was.
    const below = (lower: string): string => key(Number(lower.slice(1)) - 1);
    const middle = lowers[Math.floor(lowers.length / 2)];
    const writes: Array<[string, string | null]> = [
      ['a', 'first'],
      [lowers[1], 'lower of chunk 1'],
      [below(lowers[7]), 'just below chunk 7'],
      [lowers[7], 'lower of chunk 7'],
      [middle, null],
      [key(Number(middle.slice(1)) + 2), null],
      [below(lowers[lowers.length - 1]), 'just below the last chunk'],
      [lowers[lowers.length - 1], 'lower of the last chunk'],
      ['z', 'past the end'],
    ];
    await engine.update({
      segmentId: SEG,
      modifications: writes.map(([k, v]) => (v === null ? { family: 'f', key: Buffer.from(k), type: 'REMOVE' as const } : { family: 'f', key: Buffer.from(k), value: Buffer.from(v) })),
    });
    for (const [k, v] of writes) {
      if (v === null) model.delete(k);
      else model.set(k, v);
    }
    const got = await engine.get({ segmentId: SEG, keys: writes.map(([k]) => ({ family: 'f', key: Buffer.from(k) })) });
    expect(got.entries.map((e) => (e.found ? Buffer.from(e.value).toString() : null))).toEqual(writes.map(([, v]) => v));
    const page = await engine.iterate({ segmentId: SEG, family: 'f', maxItems: 4_000, includeValues: true });
    expect(page.items.map((i) => [i.key.toString(), Buffer.from(i.value).toString()])).toEqual([...model].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  });

  it('merges a batch sent in another key order as sent: sequences and the failing condition in that order', async () => {
    const engine = await engineWithSegment();
    const key = (n: number): Buffer => Buffer.from(`k${String(n).padStart(4, '0')}`);
    await engine.update({ segmentId: SEG, modifications: Array.from({ length: 250 }, (_, i) => ({ family: 'f', key: key(i * 2), value: Buffer.alloc(60, i) })) });
    const attempt = async (mods: ModificationInput[]) =>
      engine.update({ segmentId: SEG, modifications: mods }).then(
        () => undefined,
        (err: { code: string; index: number; message: string }) => [err.code, err.index, err.message.slice(0, 17)],
      );
    // Both [0] and [2] fail; in key order [2] (k0010) comes first, in the order sent [0] (k0400) does.
    expect(
      await attempt([
        { family: 'f', key: key(400), condition: { kind: 'NOT_EXISTS' }, value: Buffer.from('z') },
        { family: 'f', key: key(5), value: Buffer.from('new') },
        { family: 'f', key: key(10), type: 'INSERT', value: Buffer.from('x') },
      ]),
    ).toEqual(['BAD_KEY_VERSION', 0, 'modifications[0]:']);
    expect(
      await attempt([
        { family: 'f', key: key(301), type: 'REMOVE', condition: { kind: 'VERSION', segmentId: SEG, sequence: '1' } },
        { family: 'f', key: key(4), type: 'INSERT', value: Buffer.from('x') },
      ]),
    ).toEqual(['NO_SUCH_KEY', 0, 'modifications[0]:']);
    const before = await engine.get({ segmentId: SEG, keys: [5, 400].map((n) => ({ family: 'f', key: key(n) })) });
    expect(before.entries.map((e) => e.found)).toEqual([false, true]);
    // A passing batch in descending key order across chunks, with removals among the puts.
    const mods: ModificationInput[] = [
      { family: 'f', key: key(999), value: Buffer.from('last') },
      { family: 'f', key: key(401), type: 'REMOVE' },
      { family: 'f', key: key(300), value: Buffer.from('mid') },
      { family: 'f', key: key(7), type: 'INSERT', value: Buffer.from('seven') },
      { family: 'f', key: key(0), type: 'REMOVE' },
    ];
    const res = await engine.update({ segmentId: SEG, modifications: mods });
    expect(res.sequences.map((v) => v !== '')).toEqual([true, false, true, true, false]);
    const [a, , b, c] = res.sequences.map(Number);
    // Sequences follow the order sent, one apart, although the keys were merged in ascending order.
    expect([b - a, c - b]).toEqual([1, 1]);
    const got = await engine.get({ segmentId: SEG, keys: [999, 401, 300, 7, 0].map((n) => ({ family: 'f', key: key(n) })) });
    expect(got.entries.map((e) => (e.found ? [Buffer.from(e.value!).toString(), e.sequence] : null))).toEqual([
      ['last', res.sequences[0]],
      null,
      ['mid', res.sequences[2]],
      ['seven', res.sequences[3]],
      null,
    ]);
  });

  it('leaves no record of a family whose every key was removed, whichever way it was emptied', async () => {
    const location = scratch.location();
    let now = 1_700_000_000_000;
    const engine = await SegmentEngine.open(location, { clock: () => now, expirySweepIntervalMs: 0 });
    let open = true;
    scratch.defer(() => (open ? engine.close() : undefined));
    await engine.createSegment(SEG);
    const key = (n: number): Buffer => Buffer.from(`k${String(n).padStart(4, '0')}`);
    const N = 400; // about four chunks of 100-byte values
    const fill = async (family: string, ttlMs = (_n: number) => 0) => {
      for (let from = 0; from < N; from += 200) {
        await engine.update({ segmentId: SEG, modifications: Array.from({ length: 200 }, (_, i) => ({ family, key: key(from + i), value: Buffer.alloc(100, i), ttlMs: ttlMs(from + i) })) });
      }
    };
    const removeInBatches = async (family: string, from: number, descendingWithin: boolean) => {
      for (let start = from; start < N; start += 25) {
        const keys = Array.from({ length: Math.min(25, N - start) }, (_, i) => key(start + i));
        if (descendingWithin) keys.reverse();
        await engine.update({ segmentId: SEG, modifications: keys.map((k) => ({ type: 'REMOVE' as const, family, key: k })) });
      }
    };
    // The first chunk empties while later chunks still hold keys, in every case below.
    await fill('ascending');
    await removeInBatches('ascending', 0, false); // batches in key order (the merge path)
    await fill('unordered');
    await removeInBatches('unordered', 0, true); // batches in another order (the map path)
    await fill('ranges');
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE_RANGE', family: 'ranges', rangeTo: key(150) }] });
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE_RANGE', family: 'ranges', rangePrefix: Buffer.from('k') }] });
    await fill('expired', (n) => (n < 150 ? 1_000 : 0));
    now += 5_000;
    expect(await engine.sweepExpired()).toBe(150);
    await removeInBatches('expired', 150, false);
    // One key removed and put back: the family is usable after being emptied.
    await fill('refilled');
    await removeInBatches('refilled', 0, false);
    await engine.update({ segmentId: SEG, modifications: [{ family: 'refilled', key: key(7), value: Buffer.from('back') }] });

    for (const family of ['ascending', 'unordered', 'ranges', 'expired']) {
      expect(await engine.iterate({ segmentId: SEG, family, maxItems: 10 })).toEqual({ items: [], done: true });
    }
    expect((await engine.segmentInfo(SEG)).entryCount).toBe('1');
    await engine.close();
    open = false;
    // Count the segment's records in LevelDB itself: the refilled family's one chunk, nothing else.
    const db = new ClassicLevel<Buffer, Buffer>(location, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    try {
      const prefix = segmentDataPrefix(encodeSegmentId(SEG));
      const records = await db.keys({ gte: prefix, lt: prefixSuccessor(prefix) }).all();
      expect(records.map((k) => familyOf(k))).toEqual(['refilled']);
    } finally {
      await db.close();
    }
  });

  it('fills a small page past chunks of expired entries not swept yet, however many, in both directions', async () => {
    // A page of n items first locates n + 1 chunks, then at least 64, then reads the slow way: each
    // family below makes a page of one item take another of those steps, forward and in reverse.
    let now = 1_700_000_000_000;
    const engine = await engineWithSegment({ clock: () => now });
    const key = (n: number): Buffer => Buffer.from(`k${String(n).padStart(4, '0')}`);
    const N = 400; // 6,000-byte values: two or three to a chunk, so ~160 chunks
    const expiring = { none: 0, few: 5, some: 60, most: 190 };
    for (const [family, count] of Object.entries(expiring)) {
      for (const [from, to] of [
        [0, N / 2],
        [N / 2, N],
      ]) {
        const modifications = [];
        for (let n = from; n < to; n++) {
          // Forward the first `count` keys expire, in reverse the last `count` (the lowest live key at `count`, the highest at N - 1 - count).
          const expires = n < count || n >= N - count;
          modifications.push({ family, key: key(n), value: Buffer.alloc(6000, n), ttlMs: expires ? 1000 : 0 });
        }
        await engine.update({ segmentId: SEG, modifications });
      }
    }
    now += 5_000; // expired, not swept (the sweeper is off)
    for (const [family, count] of Object.entries(expiring)) {
      const forward = await iterateBoth(engine, { segmentId: SEG, family, maxItems: 1, includeValues: true });
      expect(
        forward.items.map((i) => Buffer.from(i.key).toString()),
        family,
      ).toEqual([key(count).toString()]);
      expect(Buffer.from(forward.items[0].value).equals(Buffer.alloc(6000, count)), family).toBe(true);
      const backward = await iterateBoth(engine, { segmentId: SEG, family, maxItems: 1, reverse: true });
      expect(
        backward.items.map((i) => Buffer.from(i.key).toString()),
        family,
      ).toEqual([key(N - 1 - count).toString()]);
      // From a bound inside the first chunk (its lower keys outside the page), two items.
      const bounded = await iterateBoth(engine, { segmentId: SEG, family, maxItems: 2, from: key(count + 1) });
      expect(
        bounded.items.map((i) => Buffer.from(i.key).toString()),
        family,
      ).toEqual([key(count + 1).toString(), key(count + 2).toString()]);
      expect(bounded.done, family).toBe(false);
    }
  });

  it('sweeps expired entries out of chunks, leaving live neighbours and newer writes alone', async () => {
    let now = 1_700_000_000_000;
    const engine = await engineWithSegment({ clock: () => now });
    const mods: ModificationInput[] = Array.from({ length: 200 }, (_, i) => ({
      family: 'f',
      key: Buffer.from(`k${String(i).padStart(3, '0')}`),
      value: Buffer.alloc(100, i),
      ttlMs: i % 2 === 0 ? 1000 : 0,
    }));
    await engine.update({ segmentId: SEG, modifications: mods });
    // k000 is rewritten without a TTL before its old expiry passes: the sweep must keep it.
    await engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: Buffer.from('k000'), value: Buffer.from('kept') }] });
    now += 5000;
    expect(await engine.sweepExpired()).toBe(99);
    const info = await engine.segmentInfo(SEG);
    expect(info.entryCount).toBe('101');
    const got = await engine.get({
      segmentId: SEG,
      keys: [
        { family: 'f', key: Buffer.from('k000') },
        { family: 'f', key: Buffer.from('k001') },
        { family: 'f', key: Buffer.from('k002') },
      ],
    });
    expect(got.entries.map((e) => e.found)).toEqual([true, true, false]);
    expect(got.entries[0].value.toString()).toBe('kept');
    expect(await engine.sweepExpired()).toBe(0);
  });
});
