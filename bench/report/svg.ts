/**
 * bench/report.svg: a hand-written horizontal bar chart of kvt/etcd and kvt/raw per case on a log
 * scale, with each target drawn as a line on its row. Pure: a string from data, no dependencies.
 */
import { CaseRatios, TARGETS, formatNumber } from './analysis';

const WIDTH = 860;
const LABEL_W = 210;
const RIGHT_PAD = 60;
const ROW_H = 46;
const TOP = 60;
const BAR_H = 14;
const COLORS = { etcd: '#2f6fbf', raw: '#9aa5b1', target: '#d62828', miss: '#b0b0b0' };

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

function targetFor(r: CaseRatios): { threshold: number; comparator: string } | undefined {
  return TARGETS.find((t) => t.caseId === r.caseId && t.metric === r.metric && t.kind === 'ratio');
}

/** Renders the chart. */
export function renderSvg(rows: CaseRatios[], title: string): string {
  const [lo, hi] = logDomain(rows.flatMap((r) => [r.kvtOverEtcd ?? 0, r.kvtOverRaw ?? 0, targetFor(r)?.threshold ?? 0]));
  const plotW = WIDTH - LABEL_W - RIGHT_PAD;
  const x = (v: number): number => LABEL_W + ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotW;
  const height = TOP + rows.length * ROW_H + 40;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    legend(),
  ];
  for (let d = lo; d <= hi * 1.0001; d *= 10) out.push(gridLine(x(d), d, height));
  out.push(`<line x1="${x(1)}" y1="${TOP - 8}" x2="${x(1)}" y2="${height - 30}" stroke="#444" stroke-width="1"/>`);
  rows.forEach((r, i) => out.push(...row(r, TOP + i * ROW_H, x, lo)));
  out.push('</svg>');
  return out.join('\n') + '\n';
}

function legend(): string {
  const y = 42;
  return [
    `<rect x="${LABEL_W}" y="${y - 10}" width="12" height="10" fill="${COLORS.etcd}"/>`,
    `<text x="${LABEL_W + 16}" y="${y}">kvt / etcd</text>`,
    `<rect x="${LABEL_W + 100}" y="${y - 10}" width="12" height="10" fill="${COLORS.raw}"/>`,
    `<text x="${LABEL_W + 116}" y="${y}">kvt / raw LevelDB</text>`,
    `<line x1="${LABEL_W + 250}" y1="${y - 10}" x2="${LABEL_W + 250}" y2="${y}" stroke="${COLORS.target}" stroke-width="2"/>`,
    `<text x="${LABEL_W + 256}" y="${y}">target (kvt / etcd)</text>`,
    `<text x="${WIDTH - RIGHT_PAD}" y="${y}" text-anchor="end" fill="#666">log scale</text>`,
  ].join('\n');
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

function row(r: CaseRatios, top: number, x: (v: number) => number, lo: number): string[] {
  const out = [
    `<text x="${LABEL_W - 8}" y="${top + BAR_H + 4}" text-anchor="end">${escapeXml(rowLabel(r))}</text>`,
    bar(top, r.kvtOverEtcd, COLORS.etcd, x, lo),
    bar(top + BAR_H + 2, r.kvtOverRaw, COLORS.raw, x, lo),
  ];
  const t = targetFor(r);
  if (t) {
    const tx = x(t.threshold).toFixed(1);
    out.push(`<line x1="${tx}" y1="${top - 3}" x2="${tx}" y2="${top + BAR_H + 3}" stroke="${COLORS.target}" stroke-width="2"/>`);
    out.push(`<text x="${tx}" y="${top - 5}" text-anchor="middle" fill="${COLORS.target}" font-size="10">${t.comparator === '>=' ? '≥' : '≤'}${t.threshold}×</text>`);
  }
  return out;
}
