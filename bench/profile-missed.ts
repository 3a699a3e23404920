/**
 * When a target is missed, the report says what the profile shows (issue 5): each missed case runs
 * once more against kvt alone, on a fresh cluster whose servers run under `node --cpu-prof`, while
 * this process (the client) profiles itself through the inspector. Only the samples of the measured
 * window count (see hotFunctions), so start-up, the dataset load and the warm-up are left out; the
 * run is not part of any figure (profiling slows the profiled).
 */
import * as fs from 'node:fs';
import * as inspector from 'node:inspector';
import * as path from 'node:path';
import { startCpuMeter } from './core/cpu';
import { RunResult, runClosedLoop, runFixedRate } from './core/runner';
import { loadDataset } from './datasets';
import { KvtCluster, startKvtCluster } from './peers/kvt-cluster';
import { KvtPeer } from './peers/kvt-peer';
import { CpuProfile, formatHot, hotFunctions, monotonicMicros, summarizeProfiles, TimeWindow } from './report/profile-summary';
import { BenchSettings, CaseSpec } from './workloads';

/** Measured time of a profiling run; the warm-up before it is a third of that. */
const PROFILE_MS = { quick: 3_000, full: 6_000 } as const;

/** Profiles this process through the inspector until the returned function is called. */
export async function profileSelf(): Promise<() => Promise<CpuProfile>> {
  const session = new inspector.Session();
  session.connect();
  const post = <T>(method: string): Promise<T> => new Promise((resolve, reject) => session.post(method, (err, result) => (err ? reject(err) : resolve(result as T))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return async () => {
    try {
      return (await post<{ profile: CpuProfile }>('Profiler.stop')).profile;
    } finally {
      session.disconnect();
    }
  };
}

function runFor(spec: CaseSpec, op: ReturnType<CaseSpec['operation']>, s: BenchSettings, ms: number): Promise<RunResult> {
  return spec.shape.kind === 'fixed' ? runFixedRate(op, { rate: s.w6Rate, durationMs: ms }) : runClosedLoop(op, { concurrency: spec.shape.concurrency, maxOps: s.maxOps, maxMs: ms });
}

/** What a profiled run gives: its report note, the client's profile and the window it measured. */
interface ProfiledRun {
  note: string;
  client: CpuProfile;
  window: TimeWindow;
}

/**
 * Warms `op` up, then runs it for `ms` while this process profiles itself and the CPU of the client
 * and of each server is metered; the note gives the rate reached and CPU per operation.
 */
async function profiledRun(spec: CaseSpec, op: ReturnType<CaseSpec['operation']>, s: BenchSettings, ms: number, cluster: KvtCluster): Promise<ProfiledRun> {
  await runFor(spec, op, s, ms / 3);
  const stopProfile = await profileSelf();
  const serverMeters = cluster.pids.map((pid) => startCpuMeter({ kind: 'pids', pids: () => [pid] }));
  const clientMeter = startCpuMeter({ kind: 'self' });
  const fromUs = monotonicMicros();
  const run = await runFor(spec, op, s, ms);
  const window = { fromUs, toUs: monotonicMicros() };
  const clientCpu = clientMeter();
  const serverCpu = serverMeters.map((meter) => meter());
  const client = await stopProfile();
  const perOp = (secs: number | undefined): string => (secs === undefined || run.ops === 0 ? '?' : ((secs * 1e6) / run.ops).toFixed(1));
  const servers = cluster.pids.map((pid, i) => `${cluster.roles.get(pid)} ${perOp(serverCpu[i])}`);
  const note =
    `profile of ${spec.id} (kvt alone, a separate ${ms / 1000} s run under --cpu-prof after the measured ones, not in any figure): ` +
    `${Math.round((run.units / run.elapsedMs) * 1000)} ${spec.unit}/s; CPU µs per operation: client ${perOp(clientCpu)}, ${servers.join(', ')}`;
  return { note, client, window };
}

/**
 * Runs `spec` against a profiled kvt cluster and returns report notes: the rate reached, CPU per
 * operation of the client and of each server, and each one's hottest functions in the window.
 * Profiles are kept in `dir`.
 */
export async function profileCase(spec: CaseSpec, s: BenchSettings, mode: 'quick' | 'full', dir: string, loadTimeoutMs: number, segmentStores: number): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const ms = PROFILE_MS[mode];
  const cluster = await startKvtCluster({ profileDir: dir, segmentStores });
  let profiled: ProfiledRun | undefined;
  try {
    const peer = await KvtPeer.open(cluster);
    try {
      if (spec.dataset) await loadDataset(peer, spec.dataset, s, loadTimeoutMs);
      profiled = await profiledRun(spec, spec.operation(peer, s, {}), s, ms, cluster);
    } finally {
      await peer.close();
    }
  } finally {
    // The servers write their profiles as they exit.
    await cluster.stop();
  }
  if (!profiled) return [];
  const { note, client, window } = profiled;
  const lines = [note, `profile of ${spec.id}, client (busy time): ${formatHot(hotFunctions(client, 6, window))}`];
  for (const l of summarizeProfiles(dir, cluster.roles, 6, window)) lines.push(l.replace(/^profile of /, `profile of ${spec.id}, `));
  // Written after the servers' were summarized (its name holds no pid); kept next to them for DevTools.
  fs.writeFileSync(path.join(dir, 'client.cpuprofile'), JSON.stringify(client));
  return lines;
}
