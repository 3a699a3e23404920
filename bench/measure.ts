/**
 * Runs one case against one peer: warm-up (closed loops only), then the measured phase with the
 * peer's server CPU metered around it, and turns the raw run into a {@link PeerMeasurement}.
 */
import { startCpuMeter } from './core/cpu';
import { summarize } from './core/latency';
import { RunResult, runClosedLoop, runFixedRate } from './core/runner';
import { PeerMeasurement } from './core/result';
import { Peer } from './peers/peer';
import { BenchSettings, CaseSpec, Extra } from './workloads';

async function drive(peer: Peer, spec: CaseSpec, s: BenchSettings, extra: Extra): Promise<{ run: RunResult; cpu: number | undefined }> {
  const op = spec.operation(peer, s, extra);
  if (spec.shape.kind === 'fixed') {
    const meter = startCpuMeter(peer.cpu);
    const run = await runFixedRate(op, { rate: s.w6Rate, durationMs: s.w6DurationMs });
    return { run, cpu: meter() };
  }
  const concurrency = spec.shape.concurrency;
  if (s.warmupMs > 0) await runClosedLoop(op, { concurrency, maxOps: s.maxOps, maxMs: s.warmupMs });
  // Counters restart with the measured phase.
  for (const k of Object.keys(extra)) extra[k] = 0;
  const meter = startCpuMeter(peer.cpu);
  const run = await runClosedLoop(op, { concurrency, maxOps: s.maxOps, maxMs: s.measureMs });
  return { run, cpu: meter() };
}

/**
 * A freshly started server and client run their first seconds cold (JIT, connection setup), which
 * would otherwise land on whichever case runs first: one unmeasured round of puts and gets.
 */
export async function warmUpPeer(peer: Peer, s: BenchSettings): Promise<void> {
  const values = [Buffer.alloc(s.valueBytes, 120)];
  const op = async (caller: number, rand: () => number): Promise<number> => {
    const key = `warm-${Math.floor(rand() * 1000)}`;
    if (caller % 2 === 0) await peer.put(key, values[0]);
    else await peer.get(key);
    return 1;
  };
  await runClosedLoop(op, { concurrency: 64, maxOps: s.maxOps, maxMs: s.peerWarmupMs });
}

/** Measures `spec` on `peer`. */
export async function measureCase(peer: Peer, spec: CaseSpec, s: BenchSettings): Promise<PeerMeasurement> {
  const extra: Extra = {};
  const { run, cpu } = await drive(peer, spec, s, extra);
  const secs = run.elapsedMs / 1000;
  const cpuSeconds = cpu === undefined ? null : round(cpu, 3);
  return {
    ops: run.ops,
    opsPerSec: round(run.ops / secs, 1),
    unitsPerSec: round(run.units / secs, 1),
    latency: summarize(run.histogram),
    cpuSeconds,
    cpuPerOp: cpuSeconds === null || run.ops === 0 ? null : cpuSeconds / run.ops,
    errors: run.errors,
    ...(run.firstError ? { firstError: run.firstError } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
