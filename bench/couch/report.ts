/**
 * The CouchDB endpoint benchmark's report: documents/s of each replication and the ratio to
 * PouchDB → PouchDB, as Markdown, written to bench/couch/report.md.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from '../peers/peer';

/** The scale of a run. */
export interface CouchScale {
  name: 'full' | 'quick';
  documents: number;
  revisions: number;
}

/** One replication's figures. */
export interface ReplicationFigures {
  documents: number;
  seconds: number;
  perSecond: number;
}

/** Everything one run measured. */
export interface CouchBenchResult {
  at: string;
  scale: CouchScale;
  /** The machine's 1-minute load average at the end. */
  loadAverage: number;
  intoKvt: ReplicationFigures;
  outOfKvt: ReplicationFigures;
  pouchToPouch: ReplicationFigures;
}

const rate = (f: ReplicationFigures): string => Math.round(f.perSecond).toLocaleString('en-US');

/** The Markdown report, written to bench/couch/report.md; returns it. */
export function writeCouchReport(r: CouchBenchResult): string {
  const text = renderCouchReport(r);
  fs.writeFileSync(path.join(repoRoot(), 'bench', 'couch', 'report.md'), text);
  return text;
}

/** The Markdown report of a run: each replication's rate and its ratio to PouchDB → PouchDB. */
export function renderCouchReport(r: CouchBenchResult): string {
  const ratio = (f: ReplicationFigures): string => `${(f.perSecond / r.pouchToPouch.perSecond).toFixed(2)}×`;
  const lines = [
    `# CouchDB endpoint: replication with PouchDB (${r.at.slice(0, 16).replace('T', ' ')} UTC, ${r.scale.name} scale)`,
    '',
    `${r.scale.documents.toLocaleString('en-US')} documents of ~250 bytes, ${r.scale.revisions} revisions each, replicated by PouchDB 9 (pouchdb-node, LevelDB, in the benchmark process) with its default batches (100 documents). ` +
      `kvt: \`kvt couch\` over HTTP on loopback, a controller and 2 segment stores, a database of 4 partitions. Command: \`npm run bench:couch${r.scale.name === 'quick' ? ' -- --quick' : ''}\`. ` +
      `One ${os.cpus().length}-core machine; 1-minute load average at the end: ${r.loadAverage.toFixed(1)}.`,
    '',
    '| replication | documents/s | seconds | ÷ PouchDB → PouchDB |',
    '|---|---|---|---|',
    `| PouchDB → kvt (into an empty database) | ${rate(r.intoKvt)} | ${r.intoKvt.seconds.toFixed(1)} | **${ratio(r.intoKvt)}** |`,
    `| kvt → PouchDB (into an empty database) | ${rate(r.outOfKvt)} | ${r.outOfKvt.seconds.toFixed(1)} | **${ratio(r.outOfKvt)}** |`,
    `| PouchDB → PouchDB (reference, in process) | ${rate(r.pouchToPouch)} | ${r.pouchToPouch.seconds.toFixed(1)} | 1.00× |`,
    '',
  ];
  return lines.join('\n');
}
