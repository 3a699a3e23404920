/**
 * Latency recording on hdr-histogram-js, in microseconds, and the summary the report keeps.
 */
import * as hdr from 'hdr-histogram-js';

/** Values above this (60 s in µs) are clamped rather than lost. */
const HIGHEST_US = 60_000_000;

/** A histogram of latencies in microseconds. */
export type LatencyHistogram = hdr.Histogram;

/** A fresh histogram: 1 µs … 60 s, 3 significant digits. */
export function newLatencyHistogram(): LatencyHistogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_US, numberOfSignificantValueDigits: 3 });
}

/** Records one latency given in milliseconds (as measured with performance.now()). */
export function recordMs(h: LatencyHistogram, ms: number): void {
  h.recordValue(Math.min(HIGHEST_US, Math.max(1, Math.round(ms * 1000))));
}

/** Percentiles in milliseconds. */
export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Summarises a histogram in milliseconds. */
export function summarize(h: LatencyHistogram): LatencySummary {
  const ms = (us: number): number => Math.round(us) / 1000;
  if (h.totalCount === 0) return { count: 0, p50Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0, meanMs: 0 };
  return {
    count: h.totalCount,
    p50Ms: ms(h.getValueAtPercentile(50)),
    p99Ms: ms(h.getValueAtPercentile(99)),
    p999Ms: ms(h.getValueAtPercentile(99.9)),
    maxMs: ms(h.maxValue),
    meanMs: ms(h.mean),
  };
}
