/**
 * Runs one case against its peers. The measured time is cut into rounds and the peers take turns,
 * round by round (each round starting with a different peer), so a slowdown of the shared machine
 * lands on every peer alike instead of on whichever ran in a bad minute; each peer's rounds are then
 * added up (operations, time, counters, latency histograms) into one {@link PeerMeasurement}. Every
 * round of a closed loop starts with an unmeasured warm-up (the first one full length), and after it
 * the next peer waits for this one's servers to go idle.
 *
 * Server CPU is charged per round, not per window: a server's meter runs from the start of the peer's
 * round (its warm-up included) until its servers are idle again after it, and is divided by every
 * operation the round completed (warm-up and the operations in flight at the window's end included).
 * So work a server defers past the window (a LevelDB compaction, etcd's backend commit) is charged to
 * the peer that caused it, and does not run into the next peer's round. Two peers of one server (the
 * two etcd clients) are each charged their own rounds only. The in-process raw LevelDB has no servers
 * of its own: its figure is the benchmark process over its windows, driver included.
 */
import { startCpuMeter, waitUntilIdle } from './core/cpu';
import { LatencyHistogram, newLatencyHistogram, summarize } from './core/latency';
import { RunResult, runClosedLoop, runFixedRate } from './core/runner';
import { PeerMeasurement } from './core/result';
import { Peer } from './peers/peer';
import { BenchSettings, CaseSpec, Extra } from './workloads';

/** One round's share of the settings: `rounds` of them make up the whole measured time. */
export function roundSettings(s: BenchSettings, rounds: number, round: number): BenchSettings {
  return {
    ...s,
    measureMs: s.measureMs / rounds,
    w6DurationMs: s.w6DurationMs / rounds,
    maxOps: Math.ceil(s.maxOps / rounds),
    warmupMs: round === 0 ? s.warmupMs : s.warmupMs / 4,
    // Each round draws other keys (every peer the same ones in that round), not a replay of the first.
    seed: round + 1,
  };
}

async function drive(peer: Peer, spec: CaseSpec, s: BenchSettings): Promise<{ run: RunResult; cpu: number | undefined; extra: Extra }> {
  const extra: Extra = {};
  const op = spec.operation(peer, s, extra);
  if (spec.shape.kind === 'fixed') {
    const meter = startCpuMeter(peer.cpu);
    const run = await runFixedRate(op, { rate: s.w6Rate, durationMs: s.w6DurationMs, seed: s.seed });
    return { run, cpu: meter(), extra };
  }
  // The warm-up runs in the same loop, so the window opens on a full pipeline; the counters (and an
  // in-process peer's CPU) are read over the window alone, as the operations are.
  let meter: (() => number | undefined) | undefined;
  let cpu: number | undefined;
  let counted: Extra = {};
  const window = {
    opened(): void {
      for (const k of Object.keys(extra)) extra[k] = 0;
      meter = startCpuMeter(peer.cpu);
    },
    closed(): void {
      cpu = meter?.();
      counted = { ...extra };
    },
  };
  const run = await runClosedLoop(op, { concurrency: spec.shape.concurrency, maxOps: s.maxOps, maxMs: s.measureMs, warmupMs: s.warmupMs, window, seed: s.seed });
  return { run, cpu, extra: counted };
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

/** The sum of one peer's rounds so far. */
export class RoundTotals {
  ops = 0;
  units = 0;
  errors = 0;
  firstError?: string;
  elapsedMs = 0;
  rounds = 0;
  /** The CPU charged to the rounds, summed; undefined once any round's was unreadable. */
  cpuSeconds: number | undefined = 0;
  /** The operations {@link cpuSeconds} paid for. */
  cpuOps = 0;
  readonly extra: Extra = {};
  readonly histogram: LatencyHistogram = newLatencyHistogram();

  /** Adds a round; `cpu` is what it is charged, for `cpuOps` operations. */
  add(run: RunResult, cpu: number | undefined, cpuOps: number, extra: Extra): void {
    this.rounds++;
    this.ops += run.ops;
    this.units += run.units;
    this.cpuOps += cpuOps;
    this.errors += run.errors;
    this.firstError ??= run.firstError;
    this.elapsedMs += run.elapsedMs;
    this.cpuSeconds = this.cpuSeconds === undefined || cpu === undefined ? undefined : this.cpuSeconds + cpu;
    for (const [k, v] of Object.entries(extra)) this.extra[k] = (this.extra[k] ?? 0) + v;
    this.histogram.add(run.histogram);
  }

  measurement(): PeerMeasurement {
    const secs = this.elapsedMs / 1000;
    const cpuSeconds = this.cpuSeconds === undefined ? null : round(this.cpuSeconds, 3);
    return {
      ops: this.ops,
      opsPerSec: round(this.ops / secs, 1),
      unitsPerSec: round(this.units / secs, 1),
      latency: summarize(this.histogram),
      cpuSeconds,
      cpuPerOp: this.cpuSeconds === undefined || this.cpuOps === 0 ? null : this.cpuSeconds / this.cpuOps,
      errors: this.errors,
      ...(this.firstError ? { firstError: this.firstError } : {}),
      ...(Object.keys(this.extra).length ? { extra: { ...this.extra } } : {}),
    };
  }
}

/** A peer taking part in a case, by name. */
export interface Contender {
  name: string;
  peer: Peer;
}

/**
 * Measures `spec` on every contender in `rounds` alternating rounds; resolves a measurement per
 * name, or the error that took a contender out (it sits out the remaining rounds).
 */
export async function measureCaseInRounds(contenders: readonly Contender[], spec: CaseSpec, s: BenchSettings, rounds: number): Promise<Map<string, PeerMeasurement | Error>> {
  const totals = new Map(contenders.map((c) => [c.name, new RoundTotals()]));
  const failed = new Map<string, Error>();
  // Start from idle servers: a dataset just loaded or the previous case may still be compacting.
  for (const c of contenders) await waitUntilIdle(c.peer.cpu, s.settleMs);
  for (let r = 0; r < rounds; r++) {
    const rs = roundSettings(s, rounds, r);
    for (let i = 0; i < contenders.length; i++) {
      const { name, peer } = contenders[(r + i) % contenders.length];
      if (failed.has(name)) continue;
      const servers = peer.cpu.kind === 'pids' ? startCpuMeter(peer.cpu) : undefined;
      const done = await drive(peer, spec, rs).catch((err: unknown) => {
        failed.set(name, err instanceof Error ? err : new Error(String(err)));
      });
      await waitUntilIdle(peer.cpu, s.settleMs);
      if (!done) continue;
      const { run, cpu, extra } = done;
      if (servers) totals.get(name)!.add(run, servers(), run.completed, extra);
      else totals.get(name)!.add(run, cpu, run.ops, extra);
    }
  }
  return new Map(contenders.map((c) => [c.name, failed.get(c.name) ?? totals.get(c.name)!.measurement()]));
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
