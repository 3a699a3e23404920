/**
 * A/B of two kvt builds in one sitting (how bench/W4.md measures a change): starts a cluster from the
 * build before (a worktree of it, built: `--base DIR`) and one from this checkout, each with its own
 * client, loads what the cases need into both, and runs each case in alternating rounds (each round
 * led by the other build), adding each side's rounds up. Prints per case both rates, the ratio
 * new / base and the servers' CPU per operation. The shared VM speeds up and slows down by tens of
 * per cent within minutes; the ratio of one sitting is the figure to read, never an absolute.
 *
 * `node dist/bench/ab.js --base /tmp/kvt-base [--new DIR] [--cases W7,W8,W9-uni] [--rounds 6] [--seconds 3]
 *  [--families 2000] [--preload-families N]`; `--preload-families` first grows both tables by N
 * families of one key (not measured), to see a case at a larger store.
 */
import * as path from 'node:path';
import { parseIntegerFlag } from './core/flags';
import { runBounded, loadDataset } from './datasets';
import { keyName, ValueSource } from './core/keys';
import { measureCaseInRounds, warmUpPeer } from './measure';
import { KvtCluster, startKvtCluster } from './peers/kvt-cluster';
import { KvtPeer } from './peers/kvt-peer';
import { QUICK } from './run';
import { BenchSettings, CASES, Dataset } from './workloads';

interface AbArgs {
  base: string;
  /** The build measured against `base`. @default this checkout */
  next?: string;
  cases: string[];
  rounds: number;
  seconds: number;
  families: number;
  preloadFamilies: number;
}

function parseArgs(argv: string[]): AbArgs {
  const a: AbArgs = { base: '', cases: ['W7', 'W8', 'W9-uni', 'W9-zipf'], rounds: 6, seconds: 3, families: QUICK.families, preloadFamilies: 0 };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    if (f === '--base') a.base = path.resolve(argv[++i] ?? '');
    else if (f === '--new') a.next = path.resolve(argv[++i] ?? '');
    else if (f === '--cases') a.cases = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (f === '--rounds') a.rounds = parseIntegerFlag('--rounds', argv[++i], 2, 40);
    else if (f === '--seconds') a.seconds = parseIntegerFlag('--seconds', argv[++i], 1, 60);
    else if (f === '--families') a.families = parseIntegerFlag('--families', argv[++i], 1, 10_000_000);
    else if (f === '--preload-families') a.preloadFamilies = parseIntegerFlag('--preload-families', argv[++i], 0, 100_000_000);
    else throw new Error(`unknown argument ${f}`);
  }
  if (!a.base) throw new Error('--base DIR (a built checkout of the build before) is required');
  return a;
}

const log = (line: string): void => void process.stderr.write(`[ab] ${line}\n`);

/** Grows the table behind `peer` by `count` families of one key (setup, not measured). */
async function preload(peer: KvtPeer, count: number): Promise<void> {
  const values = new ValueSource(100, 3);
  const tasks = Array.from({ length: count }, (_, f) => () => peer.putInFamily(keyName('pre', f), 'k000', values.at(f)));
  await runBounded(tasks, 128, 60 * 60_000);
}

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const s: BenchSettings = { ...QUICK, measureMs: args.rounds * args.seconds * 1000, rounds: args.rounds, families: args.families, maxOps: 50_000_000 };
  const specs = CASES.filter((c) => args.cases.includes(c.id) || args.cases.includes(c.workload));
  const clusters: KvtCluster[] = [];
  const peers: KvtPeer[] = [];
  try {
    for (const root of [args.base, args.next]) {
      const cluster = await startKvtCluster({ root });
      clusters.push(cluster);
      peers.push(await KvtPeer.open(cluster, { root }));
    }
    const [base, next] = peers;
    for (const p of peers) await warmUpPeer(p, s);
    if (args.preloadFamilies > 0) {
      for (const p of peers) {
        const started = Date.now();
        await preload(p, args.preloadFamilies);
        log(`preloaded ${args.preloadFamilies} families in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
    }
    const loaded = new Set<Dataset>();
    for (const spec of specs) {
      if (spec.dataset && !loaded.has(spec.dataset)) {
        loaded.add(spec.dataset);
        for (const p of peers) await loadDataset(p, spec.dataset, s, 30 * 60_000);
      }
      const measured = await measureCaseInRounds(
        [
          { name: 'base', peer: base },
          { name: 'new', peer: next },
        ],
        spec,
        s,
        s.rounds,
      );
      const b = measured.get('base');
      const n = measured.get('new');
      if (!b || !n || b instanceof Error || n instanceof Error) {
        log(`${spec.id}: failed (${String(b instanceof Error ? b.message : n instanceof Error ? n.message : 'no result')})`);
        continue;
      }
      const cpu = (m: typeof b): string => (m.cpuPerOp === null ? '?' : (m.cpuPerOp * 1e6).toFixed(1));
      const errors = b.errors + n.errors > 0 ? `, errors ${b.errors} / ${n.errors} (${b.firstError ?? n.firstError})` : '';
      console.log(
        `${spec.id}: base ${Math.round(b.unitsPerSec).toLocaleString('en-US')} ${spec.unit}/s, new ${Math.round(n.unitsPerSec).toLocaleString('en-US')}, new/base ${(n.unitsPerSec / b.unitsPerSec).toFixed(3)}×; server CPU µs/op ${cpu(b)} → ${cpu(n)}; p99 ${b.latency.p99Ms} → ${n.latency.p99Ms} ms${errors}`,
      );
    }
  } finally {
    for (const p of peers) await p.close().catch(() => undefined);
    for (const c of clusters) await c.stop().catch(() => undefined);
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`ab: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
