/**
 * bench/report.svg: a hand-written horizontal bar chart of kvt over each peer per case (etcd and raw
 * LevelDB always; Pravega and Cassandra when the run has them) on a log scale, with each target drawn
 * as a line on its bar. Pure: a string from data, no dependencies.
 */
import { CaseRatios, PRAVEGA_LABEL, Reference, TARGETS, formatNumber } from './analysis';

const WIDTH = 860;
const LABEL_W = 210;
const RIGHT_PAD = 60;
const TOP = 60;
const BAR_H = 12;
/** Space between two bars of a row (a target's label sits in it), and around a row's bars. */
const BAR_GAP = 10;
const ROW_PAD = 14;
const COLORS = { target: '#d62828', miss: '#b0b0b0' };

/** One kind of bar: kvt over one peer. */
interface Series {
  key: Reference | 'raw';
  label: string;
  color: string;
  value(r: CaseRatios): number | null;
}

const ETCD: Series = { key: 'etcd', label: 'kvt / etcd', color: '#2f6fbf', value: (r) => r.kvtOverEtcd };
const RAW: Series = { key: 'raw', label: 'kvt / raw LevelDB', color: '#9aa5b1', value: (r) => r.kvtOverRaw };
const PRAVEGA: Series = { key: 'pravega', label: `kvt / ${PRAVEGA_LABEL}`, color: '#e08a1e', value: (r) => r.kvtOverPravega };
const CASSANDRA: Series = { key: 'cassandra', label: 'kvt / Cassandra', color: '#6a3d9a', value: (r) => r.kvtOverCassandra };

/** Escapes text for SVG. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The log-scale domain [lo, hi] (powers of ten) covering every value and target. */
export function logDomain(values: number[]): [number, number] {
  const present = values.filter((v) => v > 0 && Number.isFinite(v));
  const lo = Math.min(0.1, ...present);
  const hi = Math.max(10, ...present);
  return [10 ** Math.floor(Math.log10(lo)), 10 ** Math.ceil(Math.log10(hi))];
}

function rowLabel(r: CaseRatios): string {
  if (r.metric === 'p99Ms') return `${r.caseId} p99 latency (lower better)`;
  if (r.metric === 'cpuPerOp') return `${r.caseId} CPU/op (lower better)`;
  return `${r.caseId} throughput`;
}

/** The ratio target of a row against one series' peer, if there is one. */
function targetFor(r: CaseRatios, series: Series): { threshold: number; comparator: string } | undefined {
  if (series.key === 'raw') return undefined;
  return TARGETS.find((t) => t.caseId === r.caseId && t.metric === r.metric && t.kind === 'ratio' && (t.against ?? 'etcd') === series.key);
}

/** etcd and raw LevelDB always; a JVM peer when some row has a ratio over it. */
function seriesOf(rows: CaseRatios[]): Series[] {
  return [ETCD, RAW, ...[PRAVEGA, CASSANDRA].filter((s) => rows.some((r) => s.value(r) !== null))];
}

/** Renders the chart. */
export function renderSvg(rows: CaseRatios[], title: string): string {
  const series = seriesOf(rows);
  const rowH = series.length * (BAR_H + BAR_GAP) + ROW_PAD;
  const [lo, hi] = logDomain(rows.flatMap((r) => series.flatMap((s) => [s.value(r) ?? 0, targetFor(r, s)?.threshold ?? 0])));
  const plotW = WIDTH - LABEL_W - RIGHT_PAD;
  const x = (v: number): number => LABEL_W + ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotW;
  const height = TOP + rows.length * rowH + 40;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    legend(series),
  ];
  for (let d = lo; d <= hi * 1.0001; d *= 10) out.push(gridLine(x(d), d, height));
  out.push(`<line x1="${x(1)}" y1="${TOP - 8}" x2="${x(1)}" y2="${height - 30}" stroke="#444" stroke-width="1"/>`);
  rows.forEach((r, i) => out.push(...row(r, series, TOP + i * rowH, x, lo)));
  out.push('</svg>');
  return out.join('\n') + '\n';
}

function legend(series: Series[]): string {
  const y = 42;
  const out: string[] = [];
  let at = 20;
  for (const s of series) {
    out.push(`<rect x="${at}" y="${y - 10}" width="12" height="10" fill="${s.color}"/>`, `<text x="${at + 16}" y="${y}">${escapeXml(s.label)}</text>`);
    at += 30 + Math.round(s.label.length * 6.2);
  }
  out.push(
    `<line x1="${at}" y1="${y - 10}" x2="${at}" y2="${y}" stroke="${COLORS.target}" stroke-width="2"/>`,
    `<text x="${at + 6}" y="${y}">target</text>`,
    `<text x="${WIDTH - 10}" y="${y}" text-anchor="end" fill="#666">log scale</text>`,
  );
  return out.join('\n');
}

function gridLine(px: number, v: number, height: number): string {
  return (
    `<line x1="${px}" y1="${TOP - 8}" x2="${px}" y2="${height - 30}" stroke="#e3e3e3"/>` +
    `<text x="${px}" y="${height - 14}" text-anchor="middle" fill="#666">${v >= 1 ? v : v.toPrecision(1)}×</text>`
  );
}

function bar(y: number, value: number | null, color: string, x: (v: number) => number, lo: number): string {
  if (value === null) return `<text x="${LABEL_W + 4}" y="${y + BAR_H - 3}" fill="${COLORS.miss}">missing</text>`;
  const x0 = x(lo);
  const w = Math.max(1, x(value) - x0);
  return `<rect x="${x0}" y="${y}" width="${w.toFixed(1)}" height="${BAR_H}" fill="${color}"/>` + `<text x="${(x0 + w + 4).toFixed(1)}" y="${y + BAR_H - 3}">${formatNumber(value)}×</text>`;
}

function row(r: CaseRatios, series: Series[], top: number, x: (v: number) => number, lo: number): string[] {
  const mid = top + (series.length * (BAR_H + BAR_GAP)) / 2;
  const out = [`<text x="${LABEL_W - 8}" y="${mid + 4}" text-anchor="end">${escapeXml(rowLabel(r))}</text>`];
  series.forEach((s, i) => {
    const y = top + i * (BAR_H + BAR_GAP);
    out.push(bar(y, s.value(r), s.color, x, lo));
    const t = targetFor(r, s);
    if (!t) return;
    const tx = x(t.threshold).toFixed(1);
    out.push(`<line x1="${tx}" y1="${y - 1}" x2="${tx}" y2="${y + BAR_H + 1}" stroke="${COLORS.target}" stroke-width="2"/>`);
    out.push(`<text x="${tx}" y="${y - 2}" text-anchor="middle" fill="${COLORS.target}" font-size="9">${t.comparator === '>=' ? '≥' : '≤'}${t.threshold}×</text>`);
  });
  return out;
}
