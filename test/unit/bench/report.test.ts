import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { keyName, seededRandom, uniformChooser, ValueSource, zipfianChooser } from '../../../bench/core/keys';
import { BenchRun, CaseResult, PeerMeasurement } from '../../../bench/core/result';
import { profileSelf } from '../../../bench/profile-missed';
import { prefixEnd } from '../../../bench/peers/etcd-grpc-peer';
import { PRAVEGA_LABEL, TARGETS, allRatios, caseRatios, evaluateTargets, ratio, verdictFor } from '../../../bench/report/analysis';
import { renderMarkdown } from '../../../bench/report/markdown';
import { formatHot, hotFunctions, monotonicMicros, profilePid } from '../../../bench/report/profile-summary';
import { escapeXml, logDomain, renderSvg } from '../../../bench/report/svg';
import { renderTable } from '../../../bench/report/terminal';

function m(unitsPerSec: number, p99Ms = 10, cpuPerOp: number | null = 0.0001): PeerMeasurement {
  return {
    ops: 1000,
    opsPerSec: unitsPerSec,
    unitsPerSec,
    cpuSeconds: cpuPerOp === null ? null : cpuPerOp * 1000,
    cpuPerOp,
    errors: 0,
    latency: { count: 1000, p50Ms: 1, p99Ms, p999Ms: p99Ms * 2, maxMs: p99Ms * 3, meanMs: 2 },
  };
}

function c(id: string, peers: CaseResult['peers']): CaseResult {
  return { id, workload: id.split('-')[0], title: `case ${id}`, unit: 'ops', peers };
}

function runOf(cases: CaseResult[]): BenchRun {
  return {
    startedAt: '2025-01-01T00:00:00.000Z',
    mode: 'quick',
    durationSec: 90,
    machine: { cpus: 2, node: 'v20', platform: 'linux', etcd: 'etcd Version: 3.4.23' },
    settings: {},
    cases,
    notes: ['a note'],
  };
}

const fullRun = runOf([
  c('W1-64', { kvt: m(20_000, 5, 0.00005), etcd3: m(4_000, 30, 0.0001), 'etcd-grpc': m(5_000, 20, 0.00008), raw: m(40_000) }),
  c('W2-uni', { kvt: m(8_000), etcd3: m(1_000), 'etcd-grpc': m(2_000), raw: m(50_000) }),
  c('W6', { kvt: m(2_000, 30), etcd3: m(2_000, 40), 'etcd-grpc': m(2_000, 50), raw: m(2_000, 4) }),
]);

describe('bench ratios', () => {
  it('divides kvt by the better of the two etcd clients', () => {
    const r = caseRatios(fullRun.cases[0], 'unitsPerSec', 'higher');
    expect(r.etcd).toBe(5_000);
    expect(r.kvtOverEtcd).toBe(4);
    expect(r.kvtOverRaw).toBe(0.5);
  });

  it('takes the lower etcd figure when lower is better', () => {
    const r = caseRatios(fullRun.cases[2], 'p99Ms', 'lower');
    expect(r.etcd).toBe(40);
    expect(r.kvtOverEtcd).toBeCloseTo(0.75);
  });

  it('gives null when a side is missing or zero', () => {
    expect(ratio(null, 5)).toBeNull();
    expect(ratio(5, null)).toBeNull();
    expect(ratio(5, 0)).toBeNull();
    const r = caseRatios(c('W4', { kvt: { missing: 'no client' }, etcd3: m(10) }), 'unitsPerSec', 'higher');
    expect(r.kvtOverEtcd).toBeNull();
  });

  it("compares server CPU with etcd only: raw LevelDB's CPU is the whole benchmark process, driver included", () => {
    const r = caseRatios(fullRun.cases[0], 'cpuPerOp', 'lower');
    expect(r.kvtOverEtcd).toBeCloseTo(0.625);
    expect(r.raw).toBeNull();
    expect(r.kvtOverRaw).toBeNull();
  });

  it('adds a W6 latency row and a W1 CPU row to the throughput rows', () => {
    const rows = allRatios(fullRun);
    expect(rows.map((r) => `${r.caseId}:${r.metric}`)).toEqual(['W1-64:unitsPerSec', 'W2-uni:unitsPerSec', 'W6:p99Ms', 'W1-64:cpuPerOp']);
    // W6's row holds kvt's p99 against etcd's lower one (etcd3's 40 ms, not etcd-grpc's 50 ms).
    expect(rows[2]).toMatchObject({ better: 'lower', etcd: 40, kvtOverEtcd: 0.75 });
  });

  it('passes over an etcd figure of zero (a meter that read nothing) instead of taking it as the best', () => {
    const w1 = c('W1-64', { kvt: m(20_000, 5, 0.00005), etcd3: m(4_000, 30, 0), 'etcd-grpc': m(5_000, 20, 0.0001) });
    const r = caseRatios(w1, 'cpuPerOp', 'lower');
    expect(r.etcd).toBe(0.0001);
    expect(r.kvtOverEtcd).toBeCloseTo(0.5);
  });

  it('divides kvt by Pravega for a Pravega target and by Cassandra for a Cassandra one', () => {
    const w1 = c('W1-64', { kvt: m(20_000), etcd3: m(4_000), pravega: m(8_000), cassandra: m(2_000) });
    const byId = Object.fromEntries(evaluateTargets(runOf([w1])).map((r) => [r.target.id, r]));
    expect(byId['W1-ratio']).toMatchObject({ actual: 5, met: true });
    expect(byId['W1-64-pravega']).toMatchObject({ actual: 2.5, met: false, verdict: 'missed by 17%: 2.50×, target ≥ 3.00× (needs 1.20× more)' });
    expect(byId['W1-64-cassandra']).toMatchObject({ actual: 10, met: true, verdict: 'met: 10.0× ≥ 4.00×' });
  });
});

describe('bench targets', () => {
  const atLeast4 = TARGETS.find((t) => t.id === 'W1-ratio')!;
  const atMostHalf = TARGETS.find((t) => t.id === 'W6')!;

  it('says a met ≥ target is met', () => {
    expect(verdictFor(atLeast4, 5.1)).toEqual({ met: true, verdict: 'met: 5.10× ≥ 4.00×' });
  });

  it('says by how much a ≥ target was missed', () => {
    expect(verdictFor(atLeast4, 2)).toEqual({ met: false, verdict: 'missed by 50%: 2.00×, target ≥ 4.00× (needs 2.00× more)' });
  });

  it('says a ≤ target reached exactly is met', () => {
    expect(verdictFor(atMostHalf, 0.5)).toEqual({ met: true, verdict: 'met: 0.50× ≤ 0.50×' });
  });

  it('says by how much a ≤ target was exceeded', () => {
    expect(verdictFor(atMostHalf, 0.75)).toEqual({ met: false, verdict: 'missed: 0.75×, target ≤ 0.50× (1.50× over)' });
  });

  it('evaluates every target, marking unmeasured ones with the reason', () => {
    const results = evaluateTargets(fullRun);
    const byId = Object.fromEntries(results.map((r) => [r.target.id, r]));
    expect(results).toHaveLength(TARGETS.length);
    expect(byId['W1-ratio'].met).toBe(true);
    expect(byId['W1-abs']).toMatchObject({ actual: 20_000, met: true });
    expect(byId['W1-cpu']).toMatchObject({ actual: 0.625, met: true });
    expect(byId['W2-uni']).toMatchObject({ actual: 4, met: true });
    expect(byId['W6'].met).toBe(false);
    expect(byId['W3']).toMatchObject({ met: null, verdict: 'not measured: case W3 was not run' });
  });

  it('does not call a target met or missed when kvt or etcd failed operations in its case', () => {
    // W6's failed operations leave the latency histogram, and etcd's lower its throughput: a ratio
    // over them is no verdict.
    const w6 = c('W6', { kvt: { ...m(2_000, 3), errors: 5, firstError: 'deadline exceeded' }, 'etcd-grpc': m(2_000, 10) });
    const w1 = c('W1-64', { kvt: m(20_000), etcd3: { ...m(4_000), errors: 2 }, 'etcd-grpc': m(3_000) });
    const byId = Object.fromEntries(evaluateTargets(runOf([w6, w1])).map((r) => [r.target.id, r]));
    expect(byId['W6']).toMatchObject({ actual: 0.3, met: null, verdict: 'not counted: kvt failed 5 operations (deadline exceeded); without them met: 0.30× ≤ 0.50×' });
    expect(byId['W1-ratio']).toMatchObject({ met: null, verdict: 'not counted: etcd3 failed 2 operations; without them met: 5.00× ≥ 4.00×' });
    // An absolute target reads kvt alone.
    expect(byId['W1-abs']).toMatchObject({ met: true, verdict: 'met: 20,000 ≥ 15,000' });
  });

  it('does not judge W6 on a kvt that recorded no latencies (its p99 reads 0 ms)', () => {
    const silent = { ...m(0), latency: { count: 0, p50Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0, meanMs: 0 } };
    const w6 = evaluateTargets(runOf([c('W6', { kvt: silent, etcd3: m(2_000, 40) })])).find((r) => r.target.id === 'W6')!;
    expect(w6).toMatchObject({ actual: null, met: null, verdict: 'not measured: no kvt figure' });
  });

  it('voids a target against Pravega or Cassandra on that peer’s failures, not on etcd’s', () => {
    const w1 = c('W1-64', { kvt: m(20_000), etcd3: { ...m(4_000), errors: 1 }, pravega: { ...m(5_000), errors: 3, firstError: 'timeout' }, cassandra: m(2_000) });
    const byId = Object.fromEntries(evaluateTargets(runOf([w1])).map((r) => [r.target.id, r]));
    expect(byId['W1-64-pravega']).toMatchObject({ met: null, verdict: 'not counted: pravega failed 3 operations (timeout); without them met: 4.00× ≥ 3.00×' });
    expect(byId['W1-64-cassandra']).toMatchObject({ met: true, verdict: 'met: 10.0× ≥ 4.00×' });
  });

  it('judges W7 against kvt’s own W1, and not when kvt failed operations in W1', () => {
    const w7 = c('W7', { kvt: m(16_000), etcd3: m(4_000) });
    const w1 = c('W1-64', { kvt: m(20_000), etcd3: m(5_000) });
    const self = (run: BenchRun) => evaluateTargets(run).find((r) => r.target.id === 'W7-self')!;
    expect(self(runOf([w1, w7]))).toMatchObject({ actual: 0.8, met: true, verdict: 'met: 80% ≥ 80%' });
    const failedW1 = c('W1-64', { kvt: { ...m(20_000), errors: 2 }, etcd3: m(5_000) });
    expect(self(runOf([failedW1, w7]))).toMatchObject({ actual: 0.8, met: null, verdict: 'not counted: kvt failed 2 operations; without them met: 80% ≥ 80%' });
  });

  it('names a missing kvt as the reason a target is unmeasured', () => {
    const run = runOf([c('W4', { kvt: { missing: 'dist/client/index.js not found' }, etcd3: m(100) })]);
    const w4 = evaluateTargets(run).find((r) => r.target.id === 'W4')!;
    expect(w4.verdict).toBe('not measured: kvt missing (dist/client/index.js not found)');
  });
});

describe('bench report rendering', () => {
  it('writes every target verdict, every peer row and the notes into the markdown', () => {
    const md = renderMarkdown(fullRun, evaluateTargets(fullRun));
    expect(md).toContain('# kvt benchmark report');
    expect(md).toContain('| ❌ | W6 p99 ≤ 0.5× etcd p99 at the same rate | missed: 0.75×, target ≤ 0.50× (1.50× over) |');
    expect(md).toContain('| W1-64 | kvt | 20,000 |');
    expect(md).toContain('| W1-64 | throughput (higher is better) | 4.00× | 0.50× |');
    expect(md).toContain('- a note');
    expect(md).toContain('![ratios of kvt to etcd and to raw LevelDB](report.svg)');
  });

  it('marks each target met, missed or unmeasured in the markdown and the terminal table', () => {
    const targets = evaluateTargets(fullRun);
    const md = renderMarkdown(fullRun, targets);
    expect(md).toContain('| ✅ | W1 puts/s ≥ 4× etcd at 64 callers | met: 4.00× ≥ 4.00× |');
    expect(md).toContain('| ⚪ | W3 successful RMW/s ≥ 3× etcd | not measured: case W3 was not run |');
    const table = renderTable(fullRun, targets);
    expect(table).toContain('  ✓ W1 puts/s ≥ 4× etcd at 64 callers: met: 4.00× ≥ 4.00×');
    expect(table).toContain('  ✗ W6 p99 ≤ 0.5× etcd p99 at the same rate: missed: 0.75×, target ≤ 0.50× (1.50× over)');
    expect(table).toContain('  ? W3 successful RMW/s ≥ 3× etcd: not measured: case W3 was not run');
  });

  it('puts kvt over Pravega and over Cassandra in their own ratio columns', () => {
    const run = runOf([c('W1-64', { kvt: m(20_000), etcd3: m(4_000), 'etcd-grpc': m(5_000), raw: m(40_000), pravega: m(8_000), cassandra: m(2_000) })]);
    const md = renderMarkdown(run, evaluateTargets(run));
    expect(md).toContain(`| case | metric | kvt / etcd | kvt / raw | kvt / ${PRAVEGA_LABEL} | kvt / Cassandra |`);
    expect(md).toContain('| W1-64 | throughput (higher is better) | 4.00× | 0.50× | 2.50× | 10.0× |');
  });

  it('shows a missing peer as missing in the markdown and the terminal table', () => {
    const run = runOf([c('W4', { kvt: { missing: 'no client | yet' }, raw: m(10) })]);
    expect(renderMarkdown(run, evaluateTargets(run))).toContain('| W4 | kvt | missing: no client / yet |');
    expect(renderTable(run, evaluateTargets(run))).toContain('missing: no client | yet');
  });

  it('draws one pair of bars per ratio row and a line per target in a well-formed SVG', () => {
    const svg = renderSvg(allRatios(fullRun), 'title <&>');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('title &lt;&amp;&gt;');
    // 4 rows × 2 bars but the CPU row's kvt / raw + background + 2 legend swatches; the W1, W2, W6-p99
    // and CPU rows carry targets.
    expect(svg.match(/<rect /g)).toHaveLength(4 * 2 - 1 + 3);
    expect(svg.match(/stroke="#d62828"/g)).toHaveLength(4 + 1);
    expect(svg).toContain('≥4×');
    expect(svg).toContain('≤0.5×');
  });

  it('labels a missing ratio instead of drawing a bar', () => {
    const run = runOf([c('W5', { kvt: { missing: 'x' }, etcd3: m(10), raw: m(10) })]);
    const svg = renderSvg(allRatios(run), 't');
    expect(svg.match(/>missing</g)).toHaveLength(2);
  });

  it('spans whole decades that cover every value', () => {
    expect(logDomain([0.5, 4])).toEqual([0.1, 10]);
    expect(logDomain([0.02, 37])).toEqual([0.01, 100]);
    expect(escapeXml('"a" & b')).toBe('&quot;a&quot; &amp; b');
  });
});

describe('bench helpers', () => {
  it('ranks the functions of a CPU profile by self samples', () => {
    const node = (id: number, functionName: string) => ({ id, callFrame: { functionName, url: 'file:///x/y.js', lineNumber: 9 } });
    const hot = hotFunctions({ nodes: [node(1, 'a'), node(2, 'b'), node(3, '(idle)')], samples: [1, 2, 2, 2, 3, 3, 3] });
    expect(hot).toEqual([
      { name: 'b y.js:10', selfPct: 75 },
      { name: 'a y.js:10', selfPct: 25 },
    ]);
  });

  it('ranks only the samples taken within a window of the monotonic clock', () => {
    const node = (id: number, functionName: string) => ({ id, callFrame: { functionName, url: '', lineNumber: -1 } });
    // Samples at 1,000 + 10, 20, 30, 40 µs: a, a, b, c.
    const profile = { nodes: [node(1, 'a'), node(2, 'b'), node(3, 'c')], startTime: 1_000, samples: [1, 1, 2, 3], timeDeltas: [10, 10, 10, 10] };
    expect(hotFunctions(profile, 8, { fromUs: 1_015, toUs: 1_040 })).toEqual([
      { name: 'a', selfPct: 50 },
      { name: 'b', selfPct: 50 },
    ]);
    expect(hotFunctions(profile, 8, { fromUs: 2_000, toUs: 3_000 })).toEqual([]);
    expect(formatHot([])).toBe('no busy samples');
  });

  it('stamps V8 profiles on the clock monotonicMicros reads (what the profiling window relies on)', async () => {
    const before = monotonicMicros();
    const stop = await profileSelf();
    let x = 0;
    for (let i = 0; i < 1e6; i++) x += i;
    expect(x).toBeGreaterThan(0);
    const profile = await stop();
    const after = monotonicMicros();
    expect(profile.startTime).toBeGreaterThanOrEqual(before);
    expect(profile.startTime).toBeLessThanOrEqual(after);
    expect(profile.samples?.length).toBeGreaterThan(0);
  });

  it('reads the pid out of a --cpu-prof file name', () => {
    expect(profilePid('CPU.20261122.061449.13730.0.001.cpuprofile')).toBe(13730);
    expect(profilePid('other.cpuprofile')).toBeUndefined();
  });

  it('computes the exclusive end of an etcd prefix range', () => {
    expect(prefixEnd(Buffer.from('f/a/'))).toEqual(Buffer.from('f/a0'));
    expect(prefixEnd(Buffer.from([0x61, 0xff]))).toEqual(Buffer.from([0x62]));
  });

  it('cuts values that do not repeat enough to compress beyond their letters', () => {
    const values = new ValueSource(100);
    const rand = seededRandom(3);
    const batch = Array.from({ length: 100 }, () => values.pick(rand));
    expect(batch.every((v) => v.length === 100 && v.every((b) => b >= 97 && b <= 122))).toBe(true);
    // 100 picks of 1,024 values repeat about 5 times.
    expect(new Set(batch.map((v) => v.toString('latin1'))).size).toBeGreaterThanOrEqual(90);
    // Random letters carry ~4.7 bits each, so deflate keeps ~58% of a W4 batch's values; from the
    // former pool of 64 values it kept 29%, the rest being repeated values.
    const joined = Buffer.concat(batch);
    expect(zlib.deflateRawSync(joined).length / joined.length).toBeGreaterThan(0.55);
    // Loading: deterministic, and 1,000 consecutive values (one scan family) distinct.
    expect(values.at(5).equals(new ValueSource(100).at(5))).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, (_, i) => values.at(i).toString('latin1'))).size).toBe(1000);
    // Values larger than the stride are separate buffers, as distinct.
    const large = new ValueSource(1000);
    expect(large.at(3).length).toBe(1000);
    expect(large.at(3).equals(large.at(4))).toBe(false);
  });

  it('chooses keys deterministically within range, zipfian skewed towards a few keys', () => {
    const zipf = zipfianChooser(10_000);
    const counts = new Map<number, number>();
    const rand = seededRandom(42);
    for (let i = 0; i < 20_000; i++) {
      const k = zipf(rand);
      expect(k).toBeGreaterThanOrEqual(0);
      expect(k).toBeLessThan(10_000);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    const hottest = Math.max(...counts.values());
    expect(hottest).toBeGreaterThan(20_000 * 0.05); // the top item of zipf(0.99) over 10k keys draws ~10%
    const uni = uniformChooser(10)(seededRandom(1));
    expect(uni).toBe(uniformChooser(10)(seededRandom(1)));
    expect(keyName('p', 42)).toBe('p-00000042');
  });
});
