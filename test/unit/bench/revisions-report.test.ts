/** The revisions benchmark's targets (issue 31): which figures each divides, and where each is met. */
import { describe, expect, it } from 'vitest';
import type { LatencySummary } from '../../../bench/core/latency';
import { RevisionsBenchResult, revisionTargets } from '../../../bench/revisions/report';

function latency(p99Ms: number): LatencySummary {
  return { count: 1000, p50Ms: p99Ms / 4, p99Ms, p999Ms: p99Ms * 2, maxMs: p99Ms * 3, meanMs: p99Ms / 3 };
}

function result(kvtFirstMBps: number): RevisionsBenchResult {
  return {
    at: '2026-11-27T12:00:00.000Z',
    quick: true,
    etcdVersion: 'etcd Version: 3.4.23',
    revisions: 10_000,
    pages: 100,
    rawBytes: 100e6,
    callers: 64,
    importCallers: 16,
    rate: 2000,
    imports: { kvt: { first: kvtFirstMBps, batched: 60, single: 20 }, etcd: { first: 6, batched: 20, single: 10 } },
    hotBytesPerRevision: 3000,
    hotTableBytes: 20e6,
    hotLevelLogBytes: 4e6,
    hotOtherBytes: 1e6,
    durableLogBytes: 64e6,
    getLatest: { kvt: { perSecond: 25_000, latency: latency(4) }, etcd: { perSecond: 5_000, latency: latency(20) } },
    mixed: { kvt: { reads: latency(5), writes: latency(12), late: 0 }, etcd: { reads: latency(9), writes: latency(15), late: 0 } },
  };
}

describe('revisionTargets', () => {
  it('divides kvt’s batched import by etcd’s put a revision, and meets each target reached exactly', () => {
    expect(revisionTargets(result(45))).toEqual([
      { target: 'import ≥ 5× etcd (MB/s; etcd a put a revision)', result: '6.00× (the first import after start: 4.50×; against etcd transactions of 128 puts: 3.00×)', met: true },
      { target: 'import ≥ 40 MB/s (the slower of the two batched imports)', result: '45.0 MB/s', met: true },
      { target: 'getLatest ≥ 5× etcd at 64 callers', result: '5.00×', met: true },
      { target: 'getLatest p99 ≤ 5 ms under 2,000 mixed ops/s', result: '5.00 ms', met: true },
    ]);
  });

  it('judges the import rate by the slower of kvt’s two batched imports', () => {
    const rate = revisionTargets(result(30))[1];
    expect(rate).toEqual({ target: 'import ≥ 40 MB/s (the slower of the two batched imports)', result: '30.0 MB/s', met: false });
  });
});
