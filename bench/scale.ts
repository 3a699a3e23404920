/**
 * The scale run (`npm run bench -- --scale [--scale-families N]`, issue 37): grows one table of a kvt
 * cluster to N key families (2,000,000 by default) of 10 entries each (20,000,000), in steps. Each
 * step creates its share of families with one single put each (W7: puts/s over the whole step), fills
 * them with the other 9 entries by batches (not a workload: loading), writes as many family-less
 * keys by single puts (W1) and one family-less record per family as large as its chunk, then measures
 * a new key into existing families (W8), point gets of family keys, uniform and zipfian (W9), and
 * point gets of those records (W2: as many LevelDB records of the same size, the same stores in the
 * same minutes), and once the stores are idle reads each store's resident memory and the size of its
 * data directory. kvt alone: the question is how kvt's own figures move as its data grows, so ratios
 * are to the first step and, per step, of families to family-less keys.
 * Bounded: each phase by operations and time, the whole run by `--scale-timeout-min`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { waitUntilIdle } from './core/cpu';
import { runBounded } from './datasets';
import { KeyChooser, keyName, uniformChooser, ValueSource, zipfianChooser } from './core/keys';
import { directoryBytes, processMemory, ProcessMemory } from './core/memory';
import { runClosedLoop } from './core/runner';
import { fetchMetrics } from '../server-kit/metrics/metrics-service';
import { KvtCluster, startKvtCluster } from './peers/kvt-cluster';
import { KvtPeer } from './peers/kvt-peer';
import { repoRoot } from './peers/peer';
import { renderScaleMarkdown, renderScaleSvg, ScaleRun, ScaleStep } from './report/scale-report';
import { familyKeyName } from './workloads';

/** Options of a scale run. */
export interface ScaleOptions {
  /** Families at the end. @default 2,000,000 */
  families: number;
  /** Steps to get there. @default 8 */
  steps: number;
  /** Entries per family (the first by W7, the rest by batches). @default 10 */
  entriesPerFamily: number;
  segmentStores: number;
  /** Callers of every measured phase. @default 64 */
  callers: number;
  /** Measured time of each W8 and W9 phase. @default 3000 */
  phaseMs: number;
  /** Bound of the whole run. */
  timeoutMs: number;
  /** The kvt checkout to run (another build, for a comparison). @default this one */
  root?: string;
  log: (line: string) => void;
}

/** The defaults: the target size of issue 37. */
export const SCALE_DEFAULTS = { families: 2_000_000, steps: 8, entriesPerFamily: 10, callers: 64, phaseMs: 3_000, timeoutMinutes: 120 } as const;

const VALUE_BYTES = 100;
/** What an entry adds to a chunk record beside its value: the entry header and a 10-byte key. */
const CHUNK_ENTRY_BYTES = 32;
const FAMILY_SPACE = 'sf';

/** The name of family-less key `k` of the scale run. */
function plainKey(k: number): string {
  return keyName('sk', k);
}

/** The family-less key W2 reads, as large as family `f`'s chunk record. */
function recordKey(f: number): string {
  return keyName('sr', f);
}

/** The name of scale family `f`. */
function familyName(f: number): string {
  return keyName(FAMILY_SPACE, f);
}

/** What a measured phase gives. */
interface Measured {
  perSec: number;
  ops: number;
  errors: number;
  firstError?: string;
}

/** Runs `op` from the callers until `maxOps` complete or `maxMs` pass; resolves ops/s over the window. */
async function measure(op: (caller: number, rand: () => number) => Promise<number>, callers: number, maxOps: number, maxMs: number, seed: number): Promise<Measured> {
  const run = await runClosedLoop(op, { concurrency: callers, maxOps, maxMs, seed });
  return { perSec: run.elapsedMs > 0 ? Math.round((run.units / run.elapsedMs) * 1000) : 0, ops: run.ops, errors: run.errors, firstError: run.firstError };
}

/** Two measurements of equal length as one. */
function combine(a: Measured, b: Measured): Measured {
  return { perSec: Math.round((a.perSec + b.perSec) / 2), ops: a.ops + b.ops, errors: a.errors + b.errors, firstError: a.firstError ?? b.firstError };
}

const CACHE_LOOKUPS = 'kvt_segmentstore_cache_lookups_total';

type Store = KvtCluster['stores'][number];

/** Hits and misses of the stores' chunk caches so far. */
interface Lookups {
  hits: number;
  misses: number;
}

/**
 * The chunk-cache lookups of every store so far, asked over its gRPC port (kvt.ops.v1.Metrics/Get,
 * only that metric: a Prometheus scrape would also count every entry of the store); undefined when
 * a store does not tell (a build before the metric).
 */
async function chunkLookups(clients: readonly grpc.Client[]): Promise<Lookups | undefined> {
  const sum: Lookups = { hits: 0, misses: 0 };
  for (const client of clients) {
    const res = await fetchMetrics(client, [CACHE_LOOKUPS], Date.now() + 10_000).catch(() => undefined);
    const values = res?.metrics.find((m) => m.name === CACHE_LOOKUPS)?.values ?? [];
    const count = (result: string) => values.find((v) => v.labels.cache === 'chunk' && v.labels.result === result)?.value;
    const hits = count('hit');
    const misses = count('miss');
    if (hits === undefined || misses === undefined) return undefined;
    sum.hits += hits;
    sum.misses += misses;
  }
  return sum;
}

/** The share of chunk lookups between `before` and `after` that hit (undefined: not told, or none). */
function hitShare(before: Lookups | undefined, after: Lookups | undefined): number | undefined {
  if (!before || !after) return undefined;
  const hits = after.hits - before.hits;
  const all = hits + after.misses - before.misses;
  return all > 0 ? Math.round((hits / all) * 1000) / 1000 : undefined;
}

/** One step: create, fill, measure, then read memory at rest. */
async function runStep(peer: KvtPeer, o: ScaleOptions, step: number, from: number, to: number, deadline: number, stores: readonly Store[], metrics: readonly grpc.Client[]): Promise<ScaleStep> {
  const values = new ValueSource(VALUE_BYTES, 7 + step);
  const left = (): number => Math.max(1_000, deadline - Date.now());
  let next = from;
  const started = Date.now();
  const w7 = await measure(
    async (_c, rand) => {
      const f = next++;
      await peer.putInFamily(familyName(f), familyKeyName(0), values.pick(rand));
      return 1;
    },
    o.callers,
    to - from,
    left(),
    step + 1,
  );
  const created = next;
  o.log(`step ${step + 1}: ${created.toLocaleString('en-US')} families, W7 ${w7.perSec.toLocaleString('en-US')} puts/s`);
  const fillStarted = Date.now();
  const rest = Array.from({ length: o.entriesPerFamily - 1 }, (_, i) => familyKeyName(i + 1));
  const fills = Array.from(
    { length: created - from },
    (_, n) => () =>
      peer.putBatch(
        familyName(from + n),
        rest.map((key, i) => ({ key, value: values.at(n + i) })),
      ),
  );
  if (rest.length > 0) await runBounded(fills, o.callers, left());
  const fillSeconds = (Date.now() - fillStarted) / 1000;
  let nextPlain = from;
  const w1 = await measure(
    async (_c, rand) => {
      const k = nextPlain++;
      await peer.put(plainKey(k), values.pick(rand));
      return 1;
    },
    o.callers,
    created - from,
    left(),
    400 + step,
  );
  // W2's records: one family-less key per family, each as large as a family's chunk record (its
  // entries with their headers), so that W2 and W9 read as many records of the same size from
  // LevelDB and their ratio is what the family path itself costs. Loading, not measured.
  const recordValue = Buffer.alloc(o.entriesPerFamily * (VALUE_BYTES + CHUNK_ENTRY_BYTES), 'r');
  await runBounded(
    Array.from({ length: created - from }, (_, n) => () => peer.put(recordKey(from + n), recordValue)),
    o.callers * 4,
    left(),
  );
  const keyCount = o.entriesPerFamily;
  const getOp =
    (choose: KeyChooser) =>
    async (_c: number, rand: () => number): Promise<number> => {
      await peer.getInFamily(familyName(choose(rand)), familyKeyName(Math.floor(rand() * keyCount)));
      return 1;
    };
  const chooseRecord = uniformChooser(created);
  const recordGet = async (_c: number, rand: () => number): Promise<number> => {
    await peer.get(recordKey(chooseRecord(rand)));
    return 1;
  };
  // The reads start from idle stores (the step's writes compacted), and W9 and W2 alternate in
  // halves, W9 W2 W2 W9, so that what remains of the compactions weighs on both alike.
  const cpu = { kind: 'pids', pids: () => stores.map((s) => s.pid) } as const;
  await waitUntilIdle(cpu, 10_000);
  const half = (): number => Math.min(o.phaseMs / 2, left());
  const uniformGet = getOp(uniformChooser(created));
  // The chunk cache's share of W9's lookups (W2's family-less gets look none up), from the stores' metrics.
  const uniformFrom = await chunkLookups(metrics);
  const w9a = await measure(uniformGet, o.callers, 50_000_000, half(), 100 + step);
  const w2a = await measure(recordGet, o.callers, 50_000_000, half(), 500 + step);
  const w2b = await measure(recordGet, o.callers, 50_000_000, half(), 600 + step);
  const w9b = await measure(uniformGet, o.callers, 50_000_000, half(), 700 + step);
  const uniformTo = await chunkLookups(metrics);
  const w9uni = combine(w9a, w9b);
  const w2 = combine(w2a, w2b);
  // Zipfian reads first warm up for half a phase, unmeasured: the uniform reads before them leave
  // every cache (kvt's chunks, LevelDB's blocks) full of cold families, and a phase of a few seconds
  // would otherwise measure mostly the warming.
  const zipfGet = getOp(zipfianChooser(created));
  await measure(zipfGet, o.callers, 50_000_000, half(), 800 + step);
  const zipfFrom = await chunkLookups(metrics);
  const w9zipf = await measure(zipfGet, o.callers, 50_000_000, Math.min(o.phaseMs, left()), 200 + step);
  const zipfTo = await chunkLookups(metrics);
  const chunkHits = { uniform: hitShare(uniformFrom, uniformTo), zipfian: hitShare(zipfFrom, zipfTo) };
  const counts = new Map<number, number>();
  const chooseFamily = uniformChooser(created);
  const w8 = await measure(
    async (caller, rand) => {
      const n = counts.get(caller) ?? 0;
      counts.set(caller, n + 1);
      await peer.putInFamily(familyName(chooseFamily(rand)), `x-${step}-${caller}-${n}`, values.pick(rand));
      return 1;
    },
    o.callers,
    50_000_000,
    Math.min(o.phaseMs, left()),
    300 + step,
  );
  await waitUntilIdle(cpu, 10_000);
  const memory = stores.map((s) => processMemory(s.pid) ?? ({ rssMb: 0, anonMb: 0, fileMb: 0 } as ProcessMemory));
  const dataMb = stores.map((s) => Math.round(directoryBytes(s.dataDir) / (1024 * 1024)));
  const errors = w7.errors + w1.errors + w2.errors + w8.errors + w9uni.errors + w9zipf.errors;
  const firstError = w7.firstError ?? w1.firstError ?? w2.firstError ?? w9uni.firstError ?? w9zipf.firstError ?? w8.firstError;
  const f = (x: number): string => x.toLocaleString('en-US');
  o.log(
    `step ${step + 1}: W1 ${f(w1.perSec)} puts/s, W9 ${f(w9uni.perSec)} / ${f(w9zipf.perSec)} gets/s, W2 ${f(w2.perSec)} gets/s, W8 ${f(w8.perSec)} puts/s, RSS ${memory.map((m) => m.rssMb).join(' / ')} MiB`,
  );
  return {
    families: created,
    entries: created * o.entriesPerFamily + w8.ops,
    w7PutsPerSec: w7.perSec,
    w1PutsPerSec: w1.perSec,
    w2GetsPerSec: w2.perSec,
    fillEntriesPerSec: fillSeconds > 0 ? Math.round(((created - from) * rest.length) / fillSeconds) : 0,
    w8PutsPerSec: w8.perSec,
    w9UniformGetsPerSec: w9uni.perSec,
    w9ZipfianGetsPerSec: w9zipf.perSec,
    ...(chunkHits.uniform === undefined ? {} : { w9UniformChunkHits: chunkHits.uniform }),
    ...(chunkHits.zipfian === undefined ? {} : { w9ZipfianChunkHits: chunkHits.zipfian }),
    memory,
    dataMb,
    stepSeconds: Math.round((Date.now() - started) / 100) / 10,
    errors,
    ...(firstError ? { firstError } : {}),
  };
}

/** Runs the scale run, writes bench/results/scale-<time>.json, bench/scale-report.md and .svg; resolves the run. */
export async function runScale(o: ScaleOptions): Promise<ScaleRun> {
  const startedAt = new Date().toISOString();
  const deadline = Date.now() + o.timeoutMs;
  const cluster = await startKvtCluster({ segmentStores: o.segmentStores, root: o.root });
  const steps: ScaleStep[] = [];
  try {
    const peer = await KvtPeer.open(cluster, { root: o.root });
    // One channel to each store for its metrics (the bench cluster runs without TLS or tokens).
    const metrics = cluster.stores.map((s) => new grpc.Client(s.address, grpc.credentials.createInsecure()));
    try {
      const per = Math.ceil(o.families / o.steps);
      for (let step = 0, from = 0; from < o.families && Date.now() < deadline; step++) {
        const to = Math.min(o.families, from + per);
        const s = await runStep(peer, o, step, from, to, deadline, cluster.stores, metrics);
        steps.push(s);
        from = s.families;
      }
    } finally {
      for (const client of metrics) client.close();
      await peer.close();
    }
  } finally {
    await cluster.stop();
  }
  const run: ScaleRun = {
    startedAt,
    machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.release()}` },
    ...(o.root ? { root: o.root } : {}),
    settings: {
      families: o.families,
      steps: o.steps,
      entriesPerFamily: o.entriesPerFamily,
      segmentStores: o.segmentStores,
      callers: o.callers,
      phaseMs: o.phaseMs,
      partitions: 8,
      valueBytes: VALUE_BYTES,
    },
    steps,
  };
  const dir = path.join(repoRoot(), 'bench');
  fs.mkdirSync(path.join(dir, 'results'), { recursive: true });
  const file = path.join(dir, 'results', `scale-${startedAt.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(run, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, 'scale-report.md'), renderScaleMarkdown(run));
  fs.writeFileSync(path.join(dir, 'scale-report.svg'), renderScaleSvg(run));
  o.log(`wrote ${path.relative(process.cwd(), file)}, bench/scale-report.md, bench/scale-report.svg`);
  return run;
}
