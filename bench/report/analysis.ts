/**
 * The pure part of the report: ratios of kvt to its peers and the targets of issues 5, 36 and 37,
 * evaluated on a {@link BenchRun}. "etcd" in a ratio is the better of the two etcd clients (etcd3 and
 * plain grpc-js) on that metric, so kvt is always compared with etcd at its best.
 */
import { BenchRun, CaseResult, PeerMeasurement, isMeasured } from '../core/result';

/** Which way is better for a metric. */
export type Better = 'higher' | 'lower';

/** A metric read from one peer's measurement. */
export type Metric = 'unitsPerSec' | 'p99Ms' | 'cpuPerOp';

/** Reads `metric` from a measurement (null when absent). */
export function metricOf(m: PeerMeasurement, metric: Metric): number | null {
  if (metric === 'p99Ms') return m.latency.count > 0 ? m.latency.p99Ms : null;
  return m[metric];
}

function betterOf(values: Array<number | null>, better: Better): number | null {
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v) && v > 0);
  if (present.length === 0) return null;
  return better === 'higher' ? Math.max(...present) : Math.min(...present);
}

/** The etcd reference value: the better of etcd3 and etcd-grpc. */
export function etcdReference(c: CaseResult, metric: Metric, better: Better): number | null {
  const vals = (['etcd3', 'etcd-grpc'] as const)
    .map((p) => c.peers[p])
    .filter(isMeasured)
    .map((m) => metricOf(m, metric));
  return betterOf(vals, better);
}

/** kvt's value divided by the reference, or null when either is missing or zero. */
export function ratio(kvt: number | null, reference: number | null): number | null {
  if (kvt === null || reference === null || reference === 0) return null;
  return kvt / reference;
}

/** kvt/etcd, kvt/raw, kvt/Pravega and kvt/Cassandra of one case on one metric. */
export interface CaseRatios {
  caseId: string;
  metric: Metric;
  better: Better;
  kvt: number | null;
  etcd: number | null;
  raw: number | null;
  pravega: number | null;
  cassandra: number | null;
  kvtOverEtcd: number | null;
  kvtOverRaw: number | null;
  /** Over Pravega's standalone server, which keeps its data in memory (not durable). */
  kvtOverPravega: number | null;
  kvtOverCassandra: number | null;
}

/** The peers a ratio target may divide kvt by: etcd (the default), or one of the JVM peers. */
export type Reference = 'etcd' | 'pravega' | 'cassandra';

/**
 * Computes the ratios of a case on a metric. Server CPU has no raw figure: raw LevelDB runs in the
 * benchmark process, whose CPU holds the workload driver too (kvt's and etcd's hold their servers alone).
 */
export function caseRatios(c: CaseResult, metric: Metric, better: Better): CaseRatios {
  const k = c.peers.kvt;
  const r = c.peers.raw;
  const kvt = isMeasured(k) ? metricOf(k, metric) : null;
  const raw = isMeasured(r) && metric !== 'cpuPerOp' ? metricOf(r, metric) : null;
  const etcd = etcdReference(c, metric, better);
  const pravega = isMeasured(c.peers.pravega) ? metricOf(c.peers.pravega, metric) : null;
  const cassandra = isMeasured(c.peers.cassandra) ? metricOf(c.peers.cassandra, metric) : null;
  return {
    caseId: c.id,
    metric,
    better,
    kvt,
    etcd,
    raw,
    pravega,
    cassandra,
    kvtOverEtcd: ratio(kvt, etcd),
    kvtOverRaw: ratio(kvt, raw),
    kvtOverPravega: ratio(kvt, pravega),
    kvtOverCassandra: ratio(kvt, cassandra),
  };
}

/** kvt over `reference` in a row. */
export function ratioOver(r: CaseRatios, reference: Reference): number | null {
  return reference === 'pravega' ? r.kvtOverPravega : reference === 'cassandra' ? r.kvtOverCassandra : r.kvtOverEtcd;
}

/** The throughput ratios of every closed-loop case, plus latency (W6) and CPU (W1) rows. */
export function allRatios(run: BenchRun): CaseRatios[] {
  // W6 runs at a fixed rate, so its throughput ratio is ~1 by construction: only its latency counts.
  const rows = run.cases.filter((c) => c.id !== 'W6').map((c) => caseRatios(c, 'unitsPerSec', 'higher'));
  const w6 = run.cases.find((c) => c.id === 'W6');
  if (w6) rows.push(caseRatios(w6, 'p99Ms', 'lower'));
  const w1 = run.cases.find((c) => c.id === 'W1-64');
  if (w1) rows.push(caseRatios(w1, 'cpuPerOp', 'lower'));
  return rows;
}

/** One target of issue 5. */
export interface Target {
  id: string;
  description: string;
  caseId: string;
  metric: Metric;
  /** 'ratio': kvt / `against`; 'absolute': kvt's own value; 'self': kvt's value / kvt's value on `baseCaseId`. */
  kind: 'ratio' | 'absolute' | 'self';
  /** The peer a 'ratio' target divides by. @default 'etcd' */
  against?: Reference;
  /** The case a 'self' target divides by. */
  baseCaseId?: string;
  comparator: '>=' | '<=';
  threshold: number;
}

/** How the report names Pravega wherever it shows a figure or ratio of it. */
export const PRAVEGA_LABEL = 'Pravega standalone (in memory, not durable)';

/** The throughput targets of issue 36 (and 37's W7) against one JVM peer: [case, what, at least ×]. */
function peerTargets(against: 'pravega' | 'cassandra', label: string, rows: Array<[string, string, number]>): Target[] {
  return rows.map(([caseId, what, threshold]) => ({
    id: `${caseId}-${against}`,
    description: `${what} ≥ ${threshold}× ${label}`,
    caseId,
    metric: 'unitsPerSec' as const,
    kind: 'ratio' as const,
    against,
    comparator: '>=' as const,
    threshold,
  }));
}

/** The targets of issue 5, of issue 37 (W7, W9) and of issue 36 (kvt against Pravega and Cassandra) on a 2-core machine. */
export const TARGETS: readonly Target[] = [
  { id: 'W1-ratio', description: 'W1 puts/s ≥ 4× etcd at 64 callers', caseId: 'W1-64', metric: 'unitsPerSec', kind: 'ratio', comparator: '>=', threshold: 4 },
  { id: 'W1-abs', description: 'W1 ≥ 15,000 durable puts/s at 64 callers', caseId: 'W1-64', metric: 'unitsPerSec', kind: 'absolute', comparator: '>=', threshold: 15_000 },
  { id: 'W2-uni', description: 'W2 uniform gets/s ≥ 4× etcd', caseId: 'W2-uni', metric: 'unitsPerSec', kind: 'ratio', comparator: '>=', threshold: 4 },
  { id: 'W2-zipf', description: 'W2 zipfian gets/s ≥ 4× etcd', caseId: 'W2-zipf', metric: 'unitsPerSec', kind: 'ratio', comparator: '>=', threshold: 4 },
  { id: 'W3', description: 'W3 successful RMW/s ≥ 3× etcd', caseId: 'W3', metric: 'unitsPerSec', kind: 'ratio', comparator: '>=', threshold: 3 },
  { id: 'W4', description: 'W4 batched entries/s ≥ 5× etcd', caseId: 'W4', metric: 'unitsPerSec', kind: 'ratio', comparator: '>=', threshold: 5 },
  { id: 'W5', description: 'W5 scanned entries/s ≥ 2× etcd', caseId: 'W5', metric: 'unitsPerSec', kind: 'ratio', comparator: '>=', threshold: 2 },
  { id: 'W6', description: 'W6 p99 ≤ 0.5× etcd p99 at the same rate', caseId: 'W6', metric: 'p99Ms', kind: 'ratio', comparator: '<=', threshold: 0.5 },
  { id: 'W1-cpu', description: 'server CPU per W1 put ≤ etcd’s (64 callers)', caseId: 'W1-64', metric: 'cpuPerOp', kind: 'ratio', comparator: '<=', threshold: 1 },
  { id: 'W7-ratio', description: 'W7 new-family puts/s ≥ 4× etcd', caseId: 'W7', metric: 'unitsPerSec', kind: 'ratio', comparator: '>=', threshold: 4 },
  { id: 'W7-self', description: 'W7 new-family puts/s ≥ 80% of kvt’s W1 (64 callers)', caseId: 'W7', baseCaseId: 'W1-64', metric: 'unitsPerSec', kind: 'self', comparator: '>=', threshold: 0.8 },
  { id: 'W9-uni', description: 'W9 uniform family gets/s ≥ 80% of kvt’s W2 uniform', caseId: 'W9-uni', baseCaseId: 'W2-uni', metric: 'unitsPerSec', kind: 'self', comparator: '>=', threshold: 0.8 },
  { id: 'W9-zipf', description: 'W9 zipfian family gets/s ≥ 80% of kvt’s W2 zipfian', caseId: 'W9-zipf', baseCaseId: 'W2-zipf', metric: 'unitsPerSec', kind: 'self', comparator: '>=', threshold: 0.8 },
  ...peerTargets('pravega', PRAVEGA_LABEL, [
    ['W1-64', 'W1 puts/s (64 callers)', 3],
    ['W2-uni', 'W2 uniform gets/s', 3],
    ['W2-zipf', 'W2 zipfian gets/s', 3],
    ['W3', 'W3 successful RMW/s', 2],
    ['W4', 'W4 batched entries/s', 3],
    ['W5', 'W5 scanned entries/s', 2],
    ['W7', 'W7 new-family puts/s', 3],
  ]),
  ...peerTargets('cassandra', 'Cassandra (synced commit log)', [
    ['W1-64', 'W1 puts/s (64 callers)', 4],
    ['W2-uni', 'W2 uniform gets/s', 4],
    ['W2-zipf', 'W2 zipfian gets/s', 4],
    ['W3', 'W3 successful RMW/s (LWT)', 5],
    ['W4', 'W4 batched entries/s', 4],
  ]),
];

/** A target evaluated on a run. */
export interface TargetResult {
  target: Target;
  /** The ratio or absolute value achieved; null when not measurable. */
  actual: number | null;
  met: boolean | null;
  /** One line: "met (5.1× ≥ 4×)", "missed by 47%: 2.1× < 4× (needs 1.9× more)", "not measured: …", "not counted: … failed …". */
  verdict: string;
}

/** Formats a number for the report: ratios with two decimals, big numbers with separators. */
export function formatNumber(x: number): string {
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US');
  if (Math.abs(x) >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

function show(x: number, kind: Target['kind']): string {
  if (kind === 'self') return `${Math.round(x * 100)}%`;
  return kind === 'ratio' ? `${formatNumber(x)}×` : formatNumber(x);
}

/** States whether `actual` meets `t`, and if not by how much it was missed. */
export function verdictFor(t: Target, actual: number): { met: boolean; verdict: string } {
  const want = `${t.comparator === '>=' ? '≥' : '≤'} ${show(t.threshold, t.kind)}`;
  if (t.comparator === '>=') {
    if (actual >= t.threshold) return { met: true, verdict: `met: ${show(actual, t.kind)} ${want}` };
    const shortPct = Math.round((1 - actual / t.threshold) * 100);
    const factor = actual > 0 ? `needs ${formatNumber(t.threshold / actual)}× more` : 'nothing achieved';
    return { met: false, verdict: `missed by ${shortPct}%: ${show(actual, t.kind)}, target ${want} (${factor})` };
  }
  if (actual <= t.threshold) return { met: true, verdict: `met: ${show(actual, t.kind)} ${want}` };
  return { met: false, verdict: `missed: ${show(actual, t.kind)}, target ${want} (${formatNumber(actual / t.threshold)}× over)` };
}

/**
 * The failed operations of the peers a target reads (kvt; for a ratio, the peer it divides by too: both
 * etcd clients for etcd), as "kvt failed 5 operations (first error)", or undefined when none failed. A
 * failed operation adds no units and leaves the latency histogram, so a figure over failures flatters
 * whoever failed less.
 */
function failures(c: CaseResult, kind: Target['kind'], against: Reference = 'etcd'): string | undefined {
  const references = against === 'etcd' ? (['etcd3', 'etcd-grpc'] as const) : ([against] as const);
  const peers = kind === 'ratio' ? (['kvt', ...references] as const) : (['kvt'] as const);
  const failed = peers.flatMap((p) => {
    const m = c.peers[p];
    if (!isMeasured(m) || m.errors === 0) return [];
    return [`${p} failed ${m.errors.toLocaleString('en-US')} operation${m.errors === 1 ? '' : 's'}${m.firstError ? ` (${m.firstError.slice(0, 80)})` : ''}`];
  });
  return failed.length > 0 ? failed.join(', ') : undefined;
}

/** Evaluates one target on a run; one whose peers failed operations is neither met nor missed. */
export function evaluateTarget(run: BenchRun, t: Target): TargetResult {
  const c = run.cases.find((x) => x.id === t.caseId);
  if (!c) return { target: t, actual: null, met: null, verdict: `not measured: case ${t.caseId} was not run` };
  const better = t.comparator === '>=' ? 'higher' : 'lower';
  const r = caseRatios(c, t.metric, better);
  const base = t.kind === 'self' ? run.cases.find((x) => x.id === t.baseCaseId) : undefined;
  if (t.kind === 'self' && !base) return { target: t, actual: null, met: null, verdict: `not measured: case ${t.baseCaseId} was not run` };
  const actual = t.kind === 'ratio' ? ratioOver(r, t.against ?? 'etcd') : base ? ratio(r.kvt, caseRatios(base, t.metric, better).kvt) : r.kvt;
  if (actual === null) {
    const k = c.peers.kvt;
    const other = t.against && t.against !== 'etcd' ? c.peers[t.against] : undefined;
    const why =
      k && 'missing' in k
        ? `kvt missing (${k.missing})`
        : r.kvt === null
          ? 'no kvt figure'
          : base
            ? `no kvt figure for ${t.baseCaseId}`
            : other && 'missing' in other
              ? `${t.against} missing (${other.missing})`
              : t.against && t.against !== 'etcd' && !other
                ? `${t.against} not in this run (--peers)`
                : `no ${t.against ?? 'etcd'} figure`;
    return { target: t, actual: null, met: null, verdict: `not measured: ${why}` };
  }
  const verdict = verdictFor(t, actual);
  const failed = failures(c, t.kind, t.against) ?? (base ? failures(base, t.kind) : undefined);
  if (failed) return { target: t, actual, met: null, verdict: `not counted: ${failed}; without them ${verdict.verdict}` };
  return { target: t, actual, ...verdict };
}

/** Evaluates every target. */
export function evaluateTargets(run: BenchRun, targets: readonly Target[] = TARGETS): TargetResult[] {
  return targets.map((t) => evaluateTarget(run, t));
}
