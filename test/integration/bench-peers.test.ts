/**
 * The benchmark's peers keep the one contract the workloads are written against (bench/peers/peer.ts),
 * each against its real server: kvt (a cluster of real processes), etcd (Debian's etcd, installed by
 * scripts/install-etcd.sh when missing, started by the benchmark's own etcd-node.ts) through the etcd3
 * library and through plain grpc-js, Pravega's standalone server (scripts/pravega.sh; its client is the
 * Java driver of bench/peers/pravega), Apache Cassandra (scripts/cassandra.sh, the benchmark's own
 * instance with a synced commit log), and raw LevelDB in-process. A peer that did less than the
 * contract (a conditional write that also wins on a stale version, a family scan that reads its
 * neighbour's keys, a batch that is not all there) would make its figures in the report compare
 * different work; so each peer also runs every workload (W1–W9) for a few hundred operations.
 *
 * The JVM peers need Java and Maven (Pravega's first start downloads ~230 MB into .pravega/).
 * KVT_SKIP_BENCH_JVM=1 skips both, KVT_SKIP_CASSANDRA=1 the Cassandra one, and says so; nothing else does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuSecondsOf } from '../../bench/core/cpu';
import { BenchRun } from '../../bench/core/result';
import { runClosedLoop, runFixedRate } from '../../bench/core/runner';
import { loadDataset } from '../../bench/datasets';
import { RoundTotals } from '../../bench/measure';
import { CassandraPeer } from '../../bench/peers/cassandra-peer';
import { Etcd3Peer } from '../../bench/peers/etcd3-peer';
import { EtcdGrpcPeer } from '../../bench/peers/etcd-grpc-peer';
import { EtcdNode, ensureEtcdInstalled, startEtcd } from '../../bench/peers/etcd-node';
import { KvtCluster, startKvtCluster } from '../../bench/peers/kvt-cluster';
import { KvtPeer } from '../../bench/peers/kvt-peer';
import { Peer, PEER_NAMES, PeerName } from '../../bench/peers/peer';
import { PravegaPeer } from '../../bench/peers/pravega-peer';
import { RawLevelPeer } from '../../bench/peers/raw-level-peer';
import { evaluateTargets } from '../../bench/report/analysis';
import { renderMarkdown } from '../../bench/report/markdown';
import { BenchSettings, CASES, Dataset } from '../../bench/workloads';

const value = (text: string): Buffer => Buffer.from(text);

/** Why a peer is left out of this run (only ever an explicit switch), or undefined. */
function skipped(name: PeerName): string | undefined {
  if ((name === 'pravega' || name === 'cassandra') && process.env.KVT_SKIP_BENCH_JVM === '1') return 'KVT_SKIP_BENCH_JVM=1';
  if (name === 'cassandra' && process.env.KVT_SKIP_CASSANDRA === '1') return 'KVT_SKIP_CASSANDRA=1';
  return undefined;
}

/** Operations each workload runs per peer: enough to cross every code path, few enough for 2 cores. */
const OPS_PER_WORKLOAD = 300;

/** The workloads at a tiny scale (a few hundred operations each; bounds, not timings). */
const TINY: BenchSettings = {
  measureMs: 120_000,
  warmupMs: 0,
  peerWarmupMs: 0,
  maxOps: OPS_PER_WORKLOAD,
  pointKeys: 500,
  rmwKeys: 1_000,
  scanFamilies: 3,
  scanFamilySize: 200,
  families: 20,
  singleFamilies: 100,
  w6Rate: 300,
  w6DurationMs: 1_000,
  valueBytes: 100,
  rounds: 1,
  settleMs: 0,
  seed: 7,
};

/** A first start of Pravega downloads it with Maven, and Cassandra starts in tens of seconds. */
const START_TIMEOUT_MS = 15 * 60_000;

describe('benchmark peers against their real servers', () => {
  const peers = new Map<PeerName, Peer>();
  const failedToStart = new Map<PeerName, string>();
  let etcd: EtcdNode | undefined;
  let kvt: KvtCluster | undefined;

  beforeAll(async () => {
    // The JVM peers start side by side with the others (their servers take the longest).
    const jvm = Promise.allSettled(
      (['pravega', 'cassandra'] as const)
        .filter((name) => !skipped(name))
        .map(async (name) => {
          try {
            peers.set(name, name === 'pravega' ? await PravegaPeer.start({ partitionCount: 4 }) : await CassandraPeer.start());
          } catch (err) {
            failedToStart.set(name, err instanceof Error ? err.message : String(err));
          }
        }),
    );
    const installed = ensureEtcdInstalled((line) => console.log(line));
    if (!installed) throw new Error('etcd is not installed and scripts/install-etcd.sh could not install it (needs root or sudo, and Debian packages)');
    etcd = await startEtcd();
    const node = etcd;
    peers.set('etcd-grpc', new EtcdGrpcPeer(node.endpoint, () => node.pid));
    peers.set('etcd3', new Etcd3Peer(node.endpoint, () => node.pid));
    kvt = await startKvtCluster({ segmentStores: 1 });
    peers.set('kvt', await KvtPeer.open(kvt, { partitionCount: 4 }));
    peers.set('raw', await RawLevelPeer.open());
    await jvm;
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    for (const p of peers.values()) await p.close().catch(() => undefined);
    await kvt?.stop();
    await etcd?.stop();
  }, 180_000);

  for (const name of PEER_NAMES) {
    const why = skipped(name);
    if (why) {
      // An explicit opt-out does not pass the peer's contract: its test fails, saying why it did not run.
      describe(name, () => {
        it('keeps the peer contract against its real server', () => {
          throw new Error(`${name} did not run: ${why}`);
        });
      });
      continue;
    }
    describe(name, () => {
      const peer = (): Peer => {
        const p = peers.get(name);
        if (!p) throw new Error(`${name} did not start: ${failedToStart.get(name) ?? 'unknown reason'}`);
        return p;
      };

      it('reads back what it wrote, and nothing for a key never written', async () => {
        expect(await peer().get(`${name}-never`)).toBeNull();
        await peer().put(`${name}-k`, value('v1'));
        await peer().put(`${name}-k`, value('v2'));
        expect((await peer().get(`${name}-k`))?.toString()).toBe('v2');
      });

      it('writes conditionally: only while absent, or only at the version read (W3)', async () => {
        const key = `${name}-rmw`;
        expect(await peer().getVersioned(key)).toEqual({ value: null, version: null });
        expect(await peer().replaceIf(key, value('a'), null)).toBe(true);
        expect(await peer().replaceIf(key, value('b'), null)).toBe(false);
        const read = await peer().getVersioned(key);
        expect(read.value?.toString()).toBe('a');
        expect(await peer().replaceIf(key, value('c'), read.version)).toBe(true);
        expect(await peer().replaceIf(key, value('d'), read.version)).toBe(false);
        expect((await peer().get(key))?.toString()).toBe('c');
      });

      it('lets exactly one of eight conditional writes from one version win', async () => {
        const key = `${name}-race`;
        await peer().put(key, value('start'));
        const { version } = await peer().getVersioned(key);
        const won = await Promise.all(Array.from({ length: 8 }, (_, i) => peer().replaceIf(key, value(`w${i}`), version)));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect((await peer().get(key))?.toString()).toBe(`w${won.indexOf(true)}`);
      });

      it('writes a batch into one family whole, and scans only that family (W4, W5)', async () => {
        const entries = Array.from({ length: 100 }, (_, i) => ({ key: `k${String(i).padStart(3, '0')}`, value: value(`v${i}`) }));
        await peer().putBatch(`${name}-fam1`, entries);
        // A family whose name starts with the other's: a prefix scan must not take its keys.
        await peer().putBatch(`${name}-fam10`, entries.slice(0, 3));
        expect(await peer().scanFamily(`${name}-fam1`)).toBe(100);
        expect(await peer().scanFamily(`${name}-fam10`)).toBe(3);
        expect(await peer().scanFamily(`${name}-fam2`)).toBe(0);
      });

      it('writes and reads single keys of families apart from each other and from family-less keys (W7, W8, W9)', async () => {
        expect(await peer().getInFamily(`${name}-one`, 'k')).toBeNull();
        await peer().putInFamily(`${name}-one`, 'k', value('first'));
        await peer().putInFamily(`${name}-one`, 'k2', value('second'));
        await peer().putInFamily(`${name}-one1`, 'k', value('other family'));
        expect((await peer().getInFamily(`${name}-one`, 'k'))?.toString()).toBe('first');
        expect((await peer().getInFamily(`${name}-one`, 'k2'))?.toString()).toBe('second');
        expect((await peer().getInFamily(`${name}-one1`, 'k'))?.toString()).toBe('other family');
        expect(await peer().get('k')).toBeNull();
        expect(await peer().scanFamily(`${name}-one`)).toBe(2);
      });

      it('loads family-less keys with putMany when it has one, readable one by one', async () => {
        const entries = Array.from({ length: 50 }, (_, i) => ({ key: `${name}-many-${i}`, value: value(`m${i}`) }));
        if (peer().putMany) await peer().putMany!(entries);
        else await Promise.all(entries.map((e) => peer().put(e.key, e.value)));
        const read = await Promise.all(entries.map((e) => peer().get(e.key)));
        expect(read.map((v) => v?.toString())).toEqual(entries.map((e) => e.value.toString()));
      });

      it(`runs every workload (W1–W9) for ${OPS_PER_WORKLOAD} operations against its server, each one answered`, async () => {
        const loaded = new Set<Dataset>();
        for (const spec of CASES) {
          if (spec.dataset && !loaded.has(spec.dataset)) {
            await loadDataset(peer(), spec.dataset, TINY, 120_000);
            loaded.add(spec.dataset);
          }
          const extra: Record<string, number> = {};
          const op = spec.operation(peer(), TINY, extra);
          const run =
            spec.shape.kind === 'fixed'
              ? await runFixedRate(op, { rate: TINY.w6Rate, durationMs: TINY.w6DurationMs, seed: TINY.seed })
              : await runClosedLoop(op, { concurrency: spec.shape.concurrency, maxOps: OPS_PER_WORKLOAD, maxMs: TINY.measureMs, seed: TINY.seed });
          expect({ case: spec.id, errors: run.errors, firstError: run.firstError }).toEqual({ case: spec.id, errors: 0, firstError: undefined });
          expect(run.ops, spec.id).toBeGreaterThanOrEqual(spec.shape.kind === 'fixed' ? (TINY.w6Rate * TINY.w6DurationMs) / 1000 : OPS_PER_WORKLOAD);
          // The data each reading workload needs is all there, and read-modify-writes succeed (under
          // contention some give up after their retries: a count of the workload, not a failure).
          for (const counter of ['misses', 'shortScans'] as const) {
            if (counter in extra) expect({ case: spec.id, [counter]: extra[counter] }).toEqual({ case: spec.id, [counter]: 0 });
          }
          if ('successes' in extra) expect(extra.successes, spec.id).toBeGreaterThan(0);
        }
      }, 600_000);

      it("charges its server's CPU (from /proc, or this process for the in-process peer)", () => {
        const seconds = cpuSecondsOf(peer().cpu);
        expect(seconds).toBeGreaterThan(0);
      });

      if (name === 'pravega' || name === 'cassandra') {
        it('appears in the report under its durability: Pravega in memory, Cassandra with its commit log mode', async () => {
          const run = await runClosedLoop(CASES[0].operation(peer(), TINY, {}), { concurrency: 16, maxOps: 100, maxMs: TINY.measureMs });
          const totals = new RoundTotals();
          totals.add(run, 0.1, run.completed, {});
          const p = peer();
          const bench: BenchRun = {
            startedAt: new Date().toISOString(),
            mode: 'quick',
            durationSec: 1,
            machine: { cpus: 2, node: process.version, platform: 'linux' },
            settings: p instanceof CassandraPeer ? { cassandraCommitLog: p.commitLogSync } : {},
            cases: [{ id: 'W1-64', workload: 'W1', title: 'puts', unit: 'puts', peers: { [name]: totals.measurement() } }],
            notes: [],
          };
          const md = renderMarkdown(bench, evaluateTargets(bench));
          const label = p instanceof CassandraPeer ? `Cassandra (commit log: ${p.commitLogSync} sync)` : 'Pravega standalone (in memory, not durable)';
          expect(md).toContain(`| W1-64 | ${label} |`);
          expect(md).toContain(`W1 puts/s (64 callers) ≥ ${name === 'pravega' ? 3 : 4}× ${name === 'pravega' ? label : 'Cassandra (synced commit log)'}`);
          if (p instanceof CassandraPeer) expect(['batch', 'group']).toContain(p.commitLogSync);
        });
      }
    });
  }
});
