/**
 * The in-process segment engine against an exact model, with keyed families spanning many chunks
 * (test/harness/chunk-workload.ts aims updates at the chunk layout: whole chunks removed by a range
 * or key by key, ranges starting or ending at a chunk boundary, runs that split a chunk).
 *
 * The first test holds the durable log's applies back for seconds, so LevelDB lags the updates until
 * a read makes the engine apply: every read path (gets, multi-key gets, iterators both ways, scans,
 * counts) must answer exactly the model right after each update, point reads before anything that
 * applies.
 *
 * The others run twelve readers beside one writer per family, whose steps write a chunk's record and
 * a run that splits that chunk in one flush (with, in the first, more than an apply slice (1 MiB) of
 * ballast to another segment between them), then remove whole chunks and cut boundaries. The first
 * reads every way with iterator reads of LevelDB answering up to 10 ms late at random, as on a busy
 * disk (test/harness/leveldb-delays.ts), so that the steps of a read straddle applies; the second
 * reads by multi-key gets, with a small chunk cache (gets read chunks from LevelDB) and slow gets;
 * the third and fourth by iterator pages the same way, the fourth with no directory cached.
 * Each read must show one state of its family between the updates completed before it began and
 * those begun before it ended (test/harness/engine-history.ts): never a key every such state holds
 * missing, never part of one update, never keys of two states in one get.
 *
 * KVT_MODEL_ROUNDS scales all of them (default 10 rounds; 8 and 4 × as many writer steps) and
 * KVT_MODEL_SEED (default 1) picks another seed.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../../segmentstore/storage/segments/segment-state';
import { aimedUpdate, sizedValue, storedChunkLowers, touchThenSplit } from '../../harness/chunk-workload';
import { applyOps, describeOps, KEY_SPACE, keyName, ModelOp, modelKnob, randomUpdate, toModifications } from '../../harness/engine-model';
import { checkAgainstModel, checkCount, checkIteration, checkKeysRightAfter, checkPointReads, CheckScope, SegmentModel } from '../../harness/engine-model-check';
import { checkReads, FamilyChain, randomRead, ReadKind, TimedRead } from '../../harness/engine-history';
import { delayOneShotReads, OneShotRead } from '../../harness/leveldb-delays';
import { mulberry32 } from '../../harness/oracle';
import { tempDir } from '../../harness/process';

const ROUNDS = modelKnob('KVT_MODEL_ROUNDS', 10);
const SEED = modelKnob('KVT_MODEL_SEED', 1);
const KEYS = Array.from({ length: KEY_SPACE }, (_, i) => keyName(i));
/** Values of the aimed updates: 12-25 to a chunk (MAX_CHUNK_BYTES), so a family of a few hundred keys spans 10-25 chunks. */
const MIN_VALUE = 600;
const MAX_VALUE = 1_300;
const SHORT_TTL_MS = 500;
/** A log large enough that only the timer (or a reader) applies it. */
const LOG_BYTES = 64 * 1024 * 1024;

/** The update's sequences as the engine answers them, from the model's first one. */
function expectedSequences(ops: readonly ModelOp[], first: number): string[] {
  let s = first;
  return ops.map((o) => (o.kind === 'REMOVE' || o.kind === 'RANGE' ? '' : String(s++)));
}

/**
 * Runs `ops` on family `fam` of segment `seg` against its model: the model changes at once (updates of
 * one segment are staged in call order); the returned promise checks the engine's answer (sequences,
 * or a failed condition exactly when the model predicted one) and resolves whether it succeeded.
 */
function runUpdate(engine: SegmentEngine, seg: string, m: SegmentModel, fam: string, ops: ModelOp[], now: number, label: string): Promise<boolean> {
  let next = m.nextSequence;
  const after = applyOps(m.families.get(fam)!, ops, now, seg, () => next++);
  const want = after ? expectedSequences(ops, m.nextSequence) : null;
  if (after) {
    m.families.set(fam, after);
    m.nextSequence = next;
  }
  const what = `${label} seg ${seg} fam '${fam}' ${describeOps(ops)}`;
  return engine.update({ segmentId: seg, modifications: toModifications(fam, ops) }).then(
    (res) => {
      expect(want, `${what}: succeeded but the model expected a failed condition`).not.toBeNull();
      expect(res.sequences, what).toEqual(want);
      return true;
    },
    (err) => {
      if (want !== null) throw new Error(`${what}: failed (${(err as Error).message}) but the model expected success`);
      expect((err as { code?: string }).code, `${what}: failed for another reason than its condition`).toMatch(/^(BAD_KEY_VERSION|NO_SUCH_KEY)$/);
      return false;
    },
  );
}

/** Keys to read right after an update of key numbers `from`…`to`: its edges, around them, and a few inside. */
function keysAround(from: number, to: number, rand: () => number): string[] {
  const numbers = new Set([from - 1, from, from + 1, to - 1, to, to + 1]);
  for (let i = 0; i < 4; i++) numbers.add(from + Math.floor(rand() * (to - from + 1)));
  return [...numbers]
    .filter((n) => n >= 0 && n < KEY_SPACE)
    .sort((a, b) => a - b)
    .map(keyName);
}

describe('segment engine against an exact model, families of many chunks, applies held back for seconds', () => {
  const SEGMENTS = ['1', '2'];
  const FAMILIES = ['fa', 'fb', ''];
  const KEYED = ['fa', 'fb'];

  it('answers gets, multi-key gets, iterators both ways, scans and counts exactly right after whole chunks are removed, boundaries cut and chunks split', async () => {
    using dir = tempDir('kvt-engine-model-held-');
    let now = 1_000_000;
    // Caches small enough that chunks and directories are evicted and read back from LevelDB.
    const options: SegmentEngineOptions = { clock: () => now, expirySweepIntervalMs: 0, chunkCacheBytes: 256 * 1024, directoryCacheBytes: 4 * 1024, logBytes: LOG_BYTES, logApplyMs: 4_000 };
    let engine = await SegmentEngine.open(dir.path, options);
    const model = new Map<string, SegmentModel>();
    for (const s of SEGMENTS) {
      await engine.createSegment(s);
      model.set(s, { families: new Map(FAMILIES.map((f) => [f, new Map()])), nextSequence: 1 });
    }
    const scope = (segmentId: string): CheckScope => ({ segmentId, model: model.get(segmentId)!, families: FAMILIES, keys: KEYS, now });
    const rand = mulberry32(SEED);
    const shapes = new Map<string, number>();
    let ops = 0,
      checks = 0,
      maxChunks = 0,
      reopens = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Random updates of every family, many in flight at once; on the first round, runs that fill
      // the keyed families (several chunks each).
      const inflight: Promise<boolean>[] = [];
      if (round === 0) {
        for (const seg of SEGMENTS) {
          for (const fam of KEYED) {
            for (let from = 0; from < KEY_SPACE; from += 100) {
              const run: ModelOp[] = KEYS.slice(from, from + 100)
                .filter(() => rand() < 0.8)
                .map((key) => ({ kind: 'PUT', key, value: sizedValue(rand, `fill${from}`, MIN_VALUE, MAX_VALUE), ttl: 0 }));
              inflight.push(runUpdate(engine, seg, model.get(seg)!, fam, run, now, 'fill'));
            }
          }
        }
      }
      const count = 20 + Math.floor(rand() * 40);
      for (let i = 0; i < count; i++) {
        const seg = SEGMENTS[Math.floor(rand() * SEGMENTS.length)];
        const fam = FAMILIES[Math.floor(rand() * FAMILIES.length)];
        const m = model.get(seg)!;
        const update = randomUpdate(rand, m.families.get(fam)!, { familyless: fam === '', segmentId: seg, tag: `r${round}i${i}`, shortTtlMs: SHORT_TTL_MS });
        inflight.push(runUpdate(engine, seg, m, fam, update, now, `round ${round} op ${i}`));
        ops++;
      }
      await Promise.all(inflight);
      // Right after: point reads, while LevelDB still lacks most of those updates.
      for (const seg of SEGMENTS) checks += await checkPointReads(engine, scope(seg), rand, `round ${round} right after its updates`);

      // Updates aimed at the chunk layout: the count first (it makes the engine apply, so LevelDB
      // holds the layout they aim at and the chunks they change), then after each update its keys at
      // once and its stretch iterated both ways (which applies it: the next update meets the same).
      for (const seg of SEGMENTS) {
        const m = model.get(seg)!;
        checks += await checkCount(engine, scope(seg), `round ${round} before the aimed updates`);
        for (let t = 0; t < 4; t++) {
          const fam = KEYED[Math.floor(rand() * KEYED.length)];
          const lowers = await storedChunkLowers(engine, seg, fam);
          maxChunks = Math.max(maxChunks, lowers.length);
          const aimed = aimedUpdate(rand, m.families.get(fam)!, lowers, { segmentId: seg, tag: `a${round}.${t}`, keySpace: KEY_SPACE, minValue: MIN_VALUE, maxValue: MAX_VALUE });
          if (aimed.ops.length === 0) continue;
          const label = `round ${round} right after ${aimed.shape} (fam '${fam}')`;
          await runUpdate(engine, seg, m, fam, aimed.ops, now, label);
          ops++;
          shapes.set(aimed.kind, (shapes.get(aimed.kind) ?? 0) + 1);
          checks += await checkKeysRightAfter(engine, scope(seg), fam, keysAround(aimed.from, aimed.to, rand), label);
          const from = keyName(Math.max(0, aimed.from - 3));
          checks += await checkIteration(engine, scope(seg), fam, rand, label, { from, to: keyName(Math.min(KEY_SPACE - 1, aimed.to + 3)), toInclusive: true });
        }
      }
      if (rand() < 0.3) {
        // Close with the log unapplied (close applies it) and reopen.
        await engine.close();
        engine = await SegmentEngine.open(dir.path, options);
        reopens++;
      }
      if (rand() < 0.4) now += 300 + Math.floor(rand() * 400); // short TTLs may pass
      for (const seg of SEGMENTS) checks += await checkAgainstModel(engine, scope(seg), rand, `after round ${round}`);
    }
    await engine.close();
    // The families really spanned many chunks, and every shape was aimed at them.
    expect(maxChunks).toBeGreaterThanOrEqual(8);
    expect(shapes.size).toBeGreaterThanOrEqual(ROUNDS >= 5 ? 5 : 1);
    console.log(JSON.stringify({ seed: SEED, rounds: ROUNDS, ops, checks, reopens, maxChunks, shapes: Object.fromEntries(shapes) }));
  }, 120_000);
});

/**
 * The two runs of readers beside writers: iterators, scans, counts and gets while chunks split in the
 * same flush as a ballast over an apply slice (caches as a store has them, so that the writers stage
 * at once; slow iterator reads); and multi-key gets while updates rewrite the chunks they read (a
 * small chunk cache, so that gets read chunks from LevelDB; slow gets).
 */
const CONCURRENT = [
  { name: 'while chunks split beside writes over an apply slice', options: {}, slow: ['all'], ballast: true, reads: undefined, steps: 8 * ROUNDS },
  { name: 'of multi-key gets while updates rewrite the chunks they read', options: { chunkCacheBytes: 32 * 1024 }, slow: ['get', 'getMany'], ballast: false, reads: 'get', steps: 4 * ROUNDS },
  // Iterator pages read a family's chunks like gets (read/family-page-reader.ts): from memory, or
  // by exact key from one snapshot; and with no directory cached, its first chunk, then an iterator.
  // Applies every few ms, reads of chunks queued up to 10 ms: a chunk a page located in LevelDB may be
  // rewritten and applied before it is read.
  {
    name: 'of iterator pages while updates rewrite the chunks they read',
    options: { chunkCacheBytes: 32 * 1024, logApplyMs: 2 },
    slow: ['getMany-queued', 'all'],
    ballast: false,
    reads: 'iterate',
    steps: 4 * ROUNDS,
  },
  {
    name: 'of iterator pages of families whose directories are not cached',
    options: { chunkCacheBytes: 32 * 1024, directoryCacheBytes: 1, logApplyMs: 2 },
    slow: ['getMany-queued', 'all'],
    ballast: false,
    reads: 'iterate',
    steps: 4 * ROUNDS,
  },
] satisfies { name: string; options: SegmentEngineOptions; slow: OneShotRead[]; ballast: boolean; reads: ReadKind | undefined; steps: number }[];

describe.each(CONCURRENT)('segment engine under concurrent readers, $name', ({ options, slow, ballast: withBallast, reads: readKind, steps: STEPS }) => {
  const FAMILIES = ['fa', 'fb'];
  const READERS = 12;
  /** Ballast: each step puts this many values of this size, more than one apply slice (1 MiB). */
  const BALLAST_VALUES = 6;
  const BALLAST_VALUE_BYTES = 192 * 1024;
  /** Where every loop stops at the latest, whatever the machine's speed. */
  const TIME_BUDGET_MS = 30_000 + ROUNDS * 2_000;

  it('shows every reader one state of each family between its updates: no key every such state holds missing, no update in part, no get mixing two states', async () => {
    using dir = tempDir('kvt-engine-model-concurrent-');
    using _slow = delayOneShotReads(mulberry32(SEED + 7), 10, slow);
    // Applies are held back (readers make them, and the log's size): what one apply holds is up to the workload.
    const engine = await SegmentEngine.open(dir.path, { expirySweepIntervalMs: 0, logBytes: LOG_BYTES, logApplyMs: 5_000, ...options });
    await engine.createSegment('1');
    await engine.createSegment('2');
    const m: SegmentModel = { families: new Map(FAMILIES.map((f) => [f, new Map()])), nextSequence: 1 };
    const chains = new Map(FAMILIES.map((f) => [f, new FamilyChain(f, new Map())]));
    const scope = { segmentId: '1', families: FAMILIES, keys: KEYS };
    const reads: TimedRead[] = [];
    const problems: string[] = [];
    const started = Date.now();
    const overTime = (): boolean => Date.now() - started > TIME_BUDGET_MS;
    let writing = FAMILIES.length;
    let reading = READERS;
    const stats = { updates: 0, failedConditions: 0, splits: 0, ballastBytes: 0, reads: 0, maxChunks: 0 };

    /** Issues an update of `fam` (recorded in its chain) and resolves once it is answered. */
    const issue = (fam: string, ops: ModelOp[], label: string): Promise<void> => {
      const chain = chains.get(fam)!;
      const k = chain.issue(label, null, performance.now());
      const done = runUpdate(engine, '1', m, fam, ops, 0, label).then((ok) => {
        chain.complete(k, performance.now());
        stats.updates++;
        if (!ok) stats.failedConditions++;
      });
      chain.states[k] = m.families.get(fam)!;
      return done;
    };

    /**
     * More than an apply slice of writes to segment 2: family-less puts, which stage at once (rotating
     * over keys, so that one apply keeps all of them).
     */
    const ballastValue = Buffer.alloc(BALLAST_VALUE_BYTES, 0x62);
    let ballastPuts = 0;
    const ballast = (): Promise<unknown> => {
      if (!withBallast) return Promise.resolve();
      stats.ballastBytes += BALLAST_VALUES * BALLAST_VALUE_BYTES;
      return Promise.all(
        Array.from({ length: BALLAST_VALUES }, () => {
          const key = Buffer.from(`b${String(ballastPuts++ % 96).padStart(2, '0')}`);
          return engine.update({ segmentId: '2', modifications: [{ type: 'PUT', family: '', key, value: ballastValue }] });
        }),
      );
    };

    const writer = async (fam: string, w: number): Promise<void> => {
      const rand = mulberry32(SEED * 100 + w);
      const spec = (u: number) => ({ segmentId: '1', tag: `w${w}u${u}`, keySpace: KEY_SPACE, minValue: MIN_VALUE, maxValue: MAX_VALUE });
      try {
        // Fill: several chunks' worth of ascending runs.
        for (let from = 0; from < KEY_SPACE; from += 60) {
          await issue(
            fam,
            KEYS.slice(from, from + 60).map((key): ModelOp => ({ kind: 'PUT', key, value: sizedValue(rand, `fill${from}`, MIN_VALUE, MAX_VALUE), ttl: 0 })),
            `fill ${from}`,
          );
        }
        for (let step = 0; step < STEPS && !overTime(); step++) {
          const lowers = await storedChunkLowers(engine, '1', fam);
          stats.maxChunks = Math.max(stats.maxChunks, lowers.length);
          // A chunk's record rewritten, a ballast bigger than an apply slice, then a run that splits
          // that chunk, all in one flush (issued in one turn); then a count that makes the engine
          // apply it at once, while the readers read.
          const { chunk, touch, split } = touchThenSplit(rand, m.families.get(fam)!, lowers, spec(step));
          const triple = [
            issue(fam, touch, `touch of chunk ${chunk} ${describeOps(touch)}`),
            ballast(),
            issue(fam, split, `run of ${split.length} keys splitting chunk ${chunk} ${describeOps(split.slice(0, 2))}`),
          ];
          stats.splits++;
          await Promise.all([...triple, randomRead(engine, scope, reads, problems, rand, `writer ${w} step ${step}`, 'count')]);
          // Then one or two other updates at once: whole chunks removed, boundaries cut, random ones.
          const burst: Promise<void>[] = [];
          for (let b = 1 + Math.floor(rand() * 2); b > 0; b--) {
            const family = m.families.get(fam)!;
            if (rand() < 0.7) {
              const aimed = aimedUpdate(rand, family, lowers, spec(step));
              if (aimed.ops.length > 0) burst.push(issue(fam, aimed.ops, `${aimed.shape} ${describeOps(aimed.ops.slice(0, 2))}`));
              continue;
            }
            // Random updates, without expiry (the readers' states must not change on their own).
            const ops = randomUpdate(rand, family, { familyless: false, segmentId: '1', tag: `w${w}u${step}.${b}`, shortTtlMs: SHORT_TTL_MS }).map((o) =>
              o.kind === 'PUT' || o.kind === 'INSERT' ? { ...o, ttl: 0 } : o,
            );
            burst.push(issue(fam, ops, describeOps(ops.slice(0, 3))));
          }
          await Promise.all(burst);
          // Paced by the readers (a few reads per step, while they read), whatever the machine's speed.
          for (const target = stats.reads + 4; stats.reads < target && reading > 0 && !overTime();) await new Promise((r) => setTimeout(r, 1));
        }
      } finally {
        writing--;
      }
    };

    const reader = async (r: number): Promise<void> => {
      const rand = mulberry32(SEED * 100 + 80 + r);
      try {
        for (let n = 0; writing > 0 && n < 10_000 && !overTime(); n++) {
          await randomRead(engine, scope, reads, problems, rand, `reader ${r} read ${n}`, readKind);
          stats.reads++;
          // A turn of the event loop between reads, as between requests: a read answered from memory
          // alone completes in microtasks, and readers looping on those would starve the writers' I/O.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        reading--;
      }
    };

    await Promise.all([...FAMILIES.map((f, w) => writer(f, w)), ...Array.from({ length: READERS }, (_, r) => reader(r))]);
    const found = [...problems, ...checkReads(reads, chains)];
    // And once everything is done, the whole segment exactly.
    const checks = await checkAgainstModel(engine, { segmentId: '1', model: m, families: FAMILIES, keys: KEYS, now: Date.now() }, mulberry32(SEED), 'after the run');
    const { applies } = engine.commitStats;
    await engine.close();
    const byKind = (kind: string) => found.filter((f) => f.includes(` ${kind}`)).length;
    console.log(
      JSON.stringify({
        seed: SEED,
        ...stats,
        applies,
        checks,
        violations: found.length,
        iterate: byKind('iterate'),
        scan: byKind('scan'),
        get: byKind('get of'),
        count: byKind('count'),
        ms: Date.now() - started,
      }),
    );
    expect(found.slice(0, 10).join('\n') + (found.length > 10 ? `\n… ${found.length} violations in all` : '')).toBe('');
    // The workload did what it is for: families of many chunks, split beside the ballast, and read.
    expect(stats.maxChunks).toBeGreaterThanOrEqual(8);
    expect(stats.splits).toBeGreaterThan(10);
    expect(stats.reads).toBeGreaterThan(100);
  }, 120_000);
});
