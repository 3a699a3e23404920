/**
 * What a peer's measurement adds up over its rounds (operations, time, errors, server CPU per
 * operation paid for), and the percentiles a latency histogram is summarised into.
 */
import { describe, expect, it } from 'vitest';
import { newLatencyHistogram, recordMs, summarize } from '../../../bench/core/latency';
import { RunResult } from '../../../bench/core/runner';
import { RoundTotals } from '../../../bench/measure';

/** A round of `ops` operations of `latencyMs` each over `elapsedMs`, two units each. */
function roundOf(ops: number, elapsedMs: number, completed: number, errors: { count: number; first?: string } = { count: 0 }, latencyMs = 2): RunResult {
  const histogram = newLatencyHistogram();
  for (let i = 0; i < ops; i++) recordMs(histogram, latencyMs);
  return { ops, units: 2 * ops, completed, errors: errors.count, ...(errors.first ? { firstError: errors.first } : {}), elapsedMs, histogram };
}

describe('RoundTotals', () => {
  it('adds rounds up: operations and time into rates, errors keeping the first, CPU over the operations it paid for', () => {
    const totals = new RoundTotals();
    totals.add(roundOf(100, 1_000, 150, { count: 1, first: 'refused' }), 0.5, 150, { retries: 3 });
    totals.add(roundOf(300, 1_000, 350, { count: 2, first: 'deadline exceeded' }), 0.3, 350, { retries: 4 });
    const m = totals.measurement();
    expect(m).toMatchObject({ ops: 400, opsPerSec: 200, unitsPerSec: 400, errors: 3, firstError: 'refused', cpuSeconds: 0.8, extra: { retries: 7 } });
    // 0.8 s of server CPU paid for 500 operations (warm-ups and those in flight included), not the 400 in the windows.
    expect(m.cpuPerOp).toBeCloseTo(0.0016, 10);
    expect(m.latency.count).toBe(400);
  });

  it('has no CPU figure once one round’s was unreadable, rather than the readable rounds’ share', () => {
    const totals = new RoundTotals();
    totals.add(roundOf(100, 1_000, 100), 0.5, 100, {});
    totals.add(roundOf(100, 1_000, 100), undefined, 100, {});
    totals.add(roundOf(100, 1_000, 100), 0.5, 100, {});
    expect(totals.measurement()).toMatchObject({ cpuSeconds: null, cpuPerOp: null });
  });

  it('has no CPU per operation when no operation was paid for', () => {
    const totals = new RoundTotals();
    totals.add(roundOf(0, 1_000, 0), 0.2, 0, {});
    expect(totals.measurement()).toMatchObject({ cpuSeconds: 0.2, cpuPerOp: null });
  });
});

describe('summarize', () => {
  it('reads p50, p99 and p999 at their percentiles, in milliseconds', () => {
    const h = newLatencyHistogram();
    for (let ms = 1; ms <= 1_000; ms++) recordMs(h, ms);
    const s = summarize(h);
    expect(s.count).toBe(1_000);
    // Three significant digits: each within half a millisecond of the value at its rank.
    expect(s.p50Ms).toBeCloseTo(500, 0);
    expect(s.p99Ms).toBeCloseTo(990, 0);
    expect(s.p999Ms).toBeCloseTo(999, 0);
    expect(s.maxMs).toBeCloseTo(1_000, 0);
    expect(s.meanMs).toBeCloseTo(500.5, 0);
  });
});
