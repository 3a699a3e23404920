/**
 * Engine benchmark (issue 2), in-process and in one run:
 *  1. raw classic-level `batch()` of 256 puts vs the engine's batched puts (Update of 256 PUTs),
 *     same batch size, same concurrency, both durable (`sync: true`). Raw is measured both as
 *     `batch(array)` and as the chained `batch().put()…write()` the engine uses (the faster, so the
 *     ratio that matters), plus chained without fsync for context;
 *  2. durable single-key updates from 256 concurrent callers through group commit.
 * The batched workloads run in alternating short rounds so machine noise hits them alike. Every
 * phase is bounded in time (about 90 s in all with the default `--seconds 10`: shorter runs swing by
 * ±10 points on this shared VM); prints a table and writes JSON to bench/results/.
 * Run: `npm run build && node dist/bench/engine/engine-bench.js [--seconds 10]` (1–30).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { SegmentEngine } from '../../segmentstore/storage/segment-engine';

const BATCH = 256;
const BATCH_CONCURRENCY = 4;
const SINGLE_CALLERS = 256;
const KEY_BYTES = 16;
const VALUE_BYTES = 100;

interface Result {
  name: string;
  ops: number;
  seconds: number;
  opsPerSecond: number;
}

function key(n: number): Buffer {
  return Buffer.from(n.toString(16).padStart(KEY_BYTES, '0'));
}

/** Runs `callers` loops of `step` until `ms` passed; resolves ops done (each step returns its op count). */
async function timed(name: string, ms: number, callers: number, step: (caller: number, i: number) => Promise<number>, quiet = false): Promise<Result> {
  const started = process.hrtime.bigint();
  const until = Date.now() + ms;
  let ops = 0;
  await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      for (let i = 0; Date.now() < until; i++) {
        const n = await step(c, i);
        ops += n;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const result = { name, ops, seconds, opsPerSecond: Math.round(ops / seconds) };
  if (!quiet) process.stderr.write(`  ${name}: ${result.opsPerSecond.toLocaleString('en-US')} ops/s\n`);
  return result;
}

type Step = (caller: number, i: number) => Promise<number>;

/** Raw classic-level: `db.batch(array)` or the chained `db.batch().put()…write()` (the faster one). */
function rawStep(db: ClassicLevel<Buffer, Buffer>, sync: boolean, chained: boolean): Step {
  const value = Buffer.alloc(VALUE_BYTES, 1);
  let next = 0; // ascending unique keys, the same pattern for every workload
  return async () => {
    const base = next;
    next += BATCH;
    if (chained) {
      const batch = db.batch();
      for (let j = 0; j < BATCH; j++) batch.put(key(base + j), value);
      await batch.write({ sync });
    } else {
      await db.batch(
        Array.from({ length: BATCH }, (_, j) => ({ type: 'put' as const, key: key(base + j), value })),
        { sync },
      );
    }
    return BATCH;
  };
}

function engineBatchStep(engine: SegmentEngine): Step {
  const value = Buffer.alloc(VALUE_BYTES, 1);
  let next = 0;
  return async () => {
    const base = next;
    next += BATCH;
    const modifications = Array.from({ length: BATCH }, (_, j) => ({ family: 'f', key: key(base + j), value }));
    await engine.update({ segmentId: '1', modifications });
    return BATCH;
  };
}

/** Durable single-key PUTs from {@link SINGLE_CALLERS} concurrent callers (segment '2'). */
async function engineSingles(engine: SegmentEngine, ms: number): Promise<Result> {
  const value = Buffer.alloc(VALUE_BYTES, 1);
  return timed(`engine single-key PUT, ${SINGLE_CALLERS} callers (durable)`, ms, SINGLE_CALLERS, async (c, i) => {
    await engine.update({ segmentId: '2', modifications: [{ family: '', key: key(c * 1e7 + i), value }] });
    return 1;
  });
}

/**
 * Runs the workloads in alternating short rounds, so a noisy machine (shared cores) slows all of them
 * alike; resolves the summed result of each.
 */
async function interleaved(ms: number, rounds: number, workloads: { name: string; callers: number; step: Step }[]): Promise<Result[]> {
  const sums = workloads.map((w) => ({ name: w.name, ops: 0, seconds: 0, opsPerSecond: 0 }));
  for (let r = 0; r < rounds; r++) {
    for (let w = 0; w < workloads.length; w++) {
      const res = await timed(workloads[w].name, ms / rounds, workloads[w].callers, workloads[w].step, true);
      sums[w].ops += res.ops;
      sums[w].seconds += res.seconds;
    }
  }
  for (const s of sums) {
    s.opsPerSecond = Math.round(s.ops / s.seconds);
    process.stderr.write(`  ${s.name}: ${s.opsPerSecond.toLocaleString('en-US')} ops/s\n`);
  }
  return sums;
}

/** Opens (creating it) a raw classic-level database named `name` under `dir`. */
async function openRaw(dir: string, name: string): Promise<ClassicLevel<Buffer, Buffer>> {
  const db = new ClassicLevel<Buffer, Buffer>(path.join(dir, name), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  return db;
}

/** The batched results, in the order the workloads ran, and the single-key one with the flushes it took. */
interface Measured {
  rawArraySync: Result;
  rawSync: Result;
  rawAsync: Result;
  batched: Result;
  singles: Result;
  flushes: number;
}

/** Runs the batched workloads (interleaved), then the single-key one, on fresh segments of `engine`. */
async function measure(engine: SegmentEngine, dbs: ClassicLevel<Buffer, Buffer>[], ms: number): Promise<Measured> {
  await engine.createSegment('1');
  await engine.createSegment('2');
  const [rawArraySync, rawSync, rawAsync, batched] = await interleaved(ms * 2, 8, [
    { name: `raw classic-level batch(array) x${BATCH}, sync`, callers: BATCH_CONCURRENCY, step: rawStep(dbs[0], true, false) },
    { name: `raw classic-level chained batch() x${BATCH}, sync`, callers: BATCH_CONCURRENCY, step: rawStep(dbs[1], true, true) },
    { name: `raw classic-level chained batch() x${BATCH}, no fsync`, callers: BATCH_CONCURRENCY, step: rawStep(dbs[2], false, true) },
    { name: `engine Update x${BATCH} PUTs (durable)`, callers: BATCH_CONCURRENCY, step: engineBatchStep(engine) },
  ]);
  const before = engine.commitStats.flushes;
  const singles = await engineSingles(engine, ms);
  return { rawArraySync, rawSync, rawAsync, batched, singles, flushes: engine.commitStats.flushes - before };
}

/** The JSON report of a run: machine, settings, results, the ratios against raw and the targets. */
function reportOf(m: Measured, ms: number) {
  const { rawArraySync, rawSync, rawAsync, batched, singles } = m;
  return {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    settings: { batch: BATCH, batchConcurrency: BATCH_CONCURRENCY, singleCallers: SINGLE_CALLERS, keyBytes: KEY_BYTES, valueBytes: VALUE_BYTES, phaseMs: ms },
    results: [rawArraySync, rawSync, rawAsync, batched, singles],
    ratios: {
      engineBatchedVsRawArraySync: +(batched.opsPerSecond / rawArraySync.opsPerSecond).toFixed(3),
      engineBatchedVsRawSync: +(batched.opsPerSecond / rawSync.opsPerSecond).toFixed(3),
      engineBatchedVsRawNoFsync: +(batched.opsPerSecond / rawAsync.opsPerSecond).toFixed(3),
    },
    singleKey: { opsPerSecond: singles.opsPerSecond, avgUpdatesPerFlush: Math.round(singles.ops / Math.max(1, m.flushes)) },
    targets: { batchedRatio: 0.7, singleKeyOpsPerSecond: 50_000 },
  };
}

/** Writes `report` as JSON to bench/results/engine-<date>.json and says where. */
function writeReport(report: ReturnType<typeof reportOf>): void {
  const outDir = path.resolve(__dirname, '..', '..', '..', 'bench', 'results');
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, `engine-${report.date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  process.stdout.write(`\nwrote ${path.relative(process.cwd(), file)}\n`);
}

async function main(): Promise<void> {
  const secondsArg = process.argv.indexOf('--seconds');
  const ms = Math.min(30, Math.max(1, Number(secondsArg > 0 ? process.argv[secondsArg + 1] : 10))) * 1000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-engine-bench-'));
  process.stderr.write(`engine benchmark: batched workloads ${(ms * 2) / 1000} s each in 8 alternating rounds, single-key ${ms / 1000} s; data in ${dir}\n`);
  const dbs = await Promise.all(['raw-array', 'raw-chained', 'raw-nofsync'].map((name) => openRaw(dir, name)));
  const engine = await SegmentEngine.open(path.join(dir, 'engine'), { expirySweepIntervalMs: 0 });
  try {
    const report = reportOf(await measure(engine, dbs, ms), ms);
    printTable(report.results, report.ratios, report.singleKey);
    writeReport(report);
  } finally {
    await engine.close();
    await Promise.all(dbs.map((db) => db.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function printTable(results: Result[], ratios: Record<string, number>, single: { opsPerSecond: number; avgUpdatesPerFlush: number }): void {
  const lines = ['', `${'workload'.padEnd(56)} ${'ops/s'.padStart(12)}`, '-'.repeat(69)];
  for (const r of results) lines.push(`${r.name.padEnd(56)} ${r.opsPerSecond.toLocaleString('en-US').padStart(12)}`);
  lines.push('');
  lines.push(`engine batched / raw chained batch (sync):     ${(ratios.engineBatchedVsRawSync * 100).toFixed(0)}%  (target >= 70%)`);
  lines.push(`engine batched / raw batch(array) (sync):      ${(ratios.engineBatchedVsRawArraySync * 100).toFixed(0)}%`);
  lines.push(`engine batched / raw chained batch (no fsync): ${(ratios.engineBatchedVsRawNoFsync * 100).toFixed(0)}%`);
  lines.push(`durable single-key updates, 256 callers: ${single.opsPerSecond.toLocaleString('en-US')} ops/s (target >= 50,000), ~${single.avgUpdatesPerFlush} per flush`);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err) => {
  process.stderr.write(`engine benchmark failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
