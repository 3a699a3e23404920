/**
 * The document benchmark's report: figures and ratios (kvt ÷ PouchDB; the target is ≥ 2× on each)
 * as Markdown ({@link renderDocumentsReport}), written to bench/documents/report.md.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from '../peers/peer';
import type { LatencySummary } from '../core/latency';

/** The scale of a run. */
export interface Scale {
  name: 'full' | 'quick';
  documents: number;
  updates: number;
  reads: number;
}

/** One phase's figures on one side. */
export interface PhaseFigures {
  operations: number;
  seconds: number;
  perSecond: number;
  latency: LatencySummary;
}

/** One side's figures. */
export interface SideFigures {
  name: string;
  /** The machine's 1-minute load average as the side ended: other work competing for the cores. */
  loadAverage: number;
  replication: PhaseFigures;
  updates: PhaseFigures;
  reads: PhaseFigures;
  changes: PhaseFigures;
}

/** Everything one run measured. */
export interface DocumentsBenchResult {
  at: string;
  scale: Scale;
  kvt: SideFigures;
  pouchdb: SideFigures;
}

const rate = (p: PhaseFigures): string => Math.round(p.perSecond).toLocaleString('en-US');
const lat = (p: PhaseFigures): string => `${p.latency.p50Ms.toFixed(2)} / ${p.latency.p99Ms.toFixed(2)} ms`;

/** The Markdown report, written to bench/documents/report.md; returns it. */
export function writeDocumentsReport(r: DocumentsBenchResult): string {
  const text = renderDocumentsReport(r);
  fs.writeFileSync(path.join(repoRoot(), 'bench', 'documents', 'report.md'), text);
  return text;
}

/** The Markdown report of a run: its figures and each kvt ÷ PouchDB ratio. */
export function renderDocumentsReport(r: DocumentsBenchResult): string {
  const rows: [string, 'replication' | 'updates' | 'reads' | 'changes', string][] = [
    [`replication writes (newEdits: false, batches of 100, 4 in flight)`, 'replication', 'documents/s'],
    ['interactive updates of distinct documents, 64 callers', 'updates', 'updates/s'],
    ['winner reads, 64 callers', 'reads', 'reads/s'],
    [`full changes read (${r.scale.documents.toLocaleString('en-US')} documents)`, 'changes', 'documents/s'],
  ];
  const lines = [
    `# Documents: DocumentStore vs PouchDB (${r.at.slice(0, 16).replace('T', ' ')} UTC, ${r.scale.name} scale)`,
    '',
    `${r.scale.documents.toLocaleString('en-US')} documents of ~250 bytes, ${r.scale.updates.toLocaleString('en-US')} updates, ${r.scale.reads.toLocaleString('en-US')} reads. Command: \`npm run bench:documents${r.scale.name === 'quick' ? ' -- --quick' : ''}\`.`,
    `kvt: ${r.kvt.name}, client in the benchmark process. PouchDB: ${r.pouchdb.name}. Both on this ${os.cpus().length}-core machine, one after the other; ` +
      `the 1-minute load average as each side ended: kvt ${r.kvt.loadAverage.toFixed(1)}, PouchDB ${r.pouchdb.loadAverage.toFixed(1)} (other work competes for the cores; kvt's three processes and client suffer more from it than one in-process database).`,
    '',
    'The same work on both sides, measured the same way (closed loops, the same callers and batches, the same documents and read order), each side after an unmeasured warm-up of the same work on a scratch database. ' +
      "Not the same durability: kvt acknowledges a write once its segment store's durable log has it on disk (O_DSYNC), while PouchDB's LevelDB writes are not synced (leveldown's default, which PouchDB does not change), so a crash of the machine can lose PouchDB's last acknowledged writes.",
    '',
    '| work | kvt | PouchDB | kvt ÷ PouchDB | kvt p50 / p99 | PouchDB p50 / p99 |',
    '|---|---|---|---|---|---|',
    ...rows.map(([what, key, unit]) => {
      const k = r.kvt[key];
      const p = r.pouchdb[key];
      const latency = key === 'changes' ? [`${k.seconds.toFixed(2)} s`, `${p.seconds.toFixed(2)} s`] : [lat(k), lat(p)];
      return `| ${what} | ${rate(k)} ${unit} | ${rate(p)} ${unit} | **${(k.perSecond / p.perSecond).toFixed(2)}×** | ${latency[0]} | ${latency[1]} |`;
    }),
    '',
  ];
  return lines.join('\n');
}
