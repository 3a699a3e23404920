/**
 * The load shapes count what they claim: on a fake clock, an operation that takes exactly L ms from C
 * callers runs at C / L per ms, and a measurement must report that rate whether the operation is fast
 * or slow (a bias that grows with L favours the faster peer in every ratio).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runClosedLoop, runFixedRate } from '../../../bench/core/runner';
import { summarize } from '../../../bench/core/latency';
import { measureCaseInRounds } from '../../../bench/measure';
import { Peer } from '../../../bench/peers/peer';
import { QUICK } from '../../../bench/run';
import { CaseSpec } from '../../../bench/workloads';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A peer that is only an identity: the operations below wait on the fake clock instead of calling it. */
const idlePeer = { name: 'raw', cpu: { kind: 'pids', pids: () => [] } } as unknown as Peer;

/** A case whose operation takes `latencyMs` from `concurrency` callers; `before` may fail an attempt first. */
function fixedLatencyCase(latencyMs: number, concurrency: number, before?: (extra: Record<string, number>) => void): CaseSpec {
  return {
    id: 'T',
    workload: 'T',
    title: 'fixed latency',
    unit: 'ops',
    shape: { kind: 'closed', concurrency },
    operation(_peer, _s, extra) {
      extra.done = 0;
      return async () => {
        before?.(extra);
        await sleep(latencyMs);
        extra.done++;
        return 1;
      };
    },
  };
}

/** Runs `work` on the fake clock until it settles. */
async function settle<T>(work: Promise<T>): Promise<T> {
  await vi.advanceTimersByTimeAsync(60_000);
  return work;
}

describe('bench runner', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts a closed loop by the operations that complete within its measured window, over that window alone', async () => {
    // 4 callers × 100 ms: 40 operations a second. Measured from 30 ms to 1,030 ms: completions at 100 … 1,000 ms.
    const op = async (): Promise<number> => {
      await sleep(100);
      return 1;
    };
    const run = await settle(runClosedLoop(op, { concurrency: 4, maxOps: 1_000_000, maxMs: 1_000, warmupMs: 30 }));
    expect(run.elapsedMs).toBe(1_000);
    expect(run.ops).toBe(40);
    expect(run.units).toBe(40);
    expect(run.histogram.totalCount).toBe(40);
    expect(summarize(run.histogram).p50Ms).toBeCloseTo(100, 0);
  });

  it('measures a slow peer and a fast one each at its steady rate, over rounds with warm-ups', async () => {
    // Warm-ups of 435 ms (round 0) and 108.75 ms (round 1) keep the window's ends off the completions.
    const s = { ...QUICK, measureMs: 2_000, warmupMs: 435, rounds: 2 };
    const measured = [];
    for (const latencyMs of [10, 200]) {
      const m = (await settle(measureCaseInRounds([{ name: 'p', peer: idlePeer }], fixedLatencyCase(latencyMs, 4), s, 2))).get('p');
      if (!m || m instanceof Error) throw new Error(`no measurement: ${String(m)}`);
      measured.push(m);
    }
    // 4 callers: 400/s at 10 ms and 20/s at 200 ms, a ratio of 20. (Draining each round's pipeline
    // before measuring and waiting for it inside the window made it 396.4 and 16.7: 23.7.)
    expect(measured.map((m) => m.unitsPerSec)).toEqual([400, 20]);
    // The counters cover the same window as the operations.
    for (const m of measured) expect(m.extra?.done).toBe(m.ops);
  });

  it('counts the errors of the warm-up as the peer’s errors instead of dropping them', async () => {
    let attempts = 0;
    const failFirstFour = (): void => {
      if (attempts++ < 4) throw new Error('refused');
    };
    const s = { ...QUICK, measureMs: 1_000, warmupMs: 300, rounds: 1 };
    const result = await settle(measureCaseInRounds([{ name: 'p', peer: idlePeer }], fixedLatencyCase(50, 4, failFirstFour), s, 1));
    const m = result.get('p');
    if (!m || m instanceof Error) throw new Error(`no measurement: ${String(m)}`);
    expect(m.errors).toBe(4);
    expect(m.firstError).toBe('refused');
  });

  it('measures a fixed-rate operation from its intended start, so a stall delays every operation behind it', async () => {
    // 100 operations a second for 1 s; the server answers nothing between 200 and 700 ms.
    const stallEnd = 700;
    const op = async (): Promise<number> => {
      const now = performance.now();
      await sleep(now >= 200 && now < stallEnd ? stallEnd - now + 1 : 1);
      return 1;
    };
    const run = await settle(runFixedRate(op, { rate: 100, durationMs: 1_000, maxOutstanding: 1 }));
    const latency = summarize(run.histogram);
    expect(run.ops).toBe(100);
    // With one operation outstanding, the 49 intended during the stall are sent only after it; measured
    // from when they were sent they would look like 1 ms each.
    expect(latency.maxMs).toBeGreaterThanOrEqual(500);
    expect(latency.p50Ms).toBeGreaterThanOrEqual(2);
  });
});
