/**
 * `npm run bench:couch`: replication through kvt's CouchDB endpoint against replication between two
 * PouchDB databases, in the same run (issue 34). A real PouchDB 9 (LevelDB, in this process) holds
 * the documents; `kvt couch` runs as a process beside a local cluster (a controller and two segment
 * stores); the replications are PouchDB's own, over HTTP to kvt:
 *
 * 1. PouchDB → kvt: every document into an empty kvt database;
 * 2. kvt → PouchDB: out of kvt into an empty PouchDB database;
 * 3. the reference: PouchDB → PouchDB (LevelDB to LevelDB, in process, no HTTP).
 *
 * Each document has 3 revisions (created, edited twice). `--quick`: 2,000 documents instead of
 * 10,000. Writes bench/results/couch-<time>.json and bench/couch/report.md.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { nodeFlagsFor } from '../../server-kit/node-flags';
import { freePort, killOnExit, LineWatcher, makeTempDir, parseJsonLine, removeDir, stopChild } from '../core/processes';
import { startKvtCluster } from '../peers/kvt-cluster';
import { repoRoot } from '../peers/peer';
import { Pouch, PouchDB, ReplicationResult } from './pouch';
import { CouchBenchResult, CouchScale, ReplicationFigures, writeCouchReport } from './report';

const SCALES: Record<CouchScale['name'], CouchScale> = {
  full: { name: 'full', documents: 10_000, revisions: 3 },
  quick: { name: 'quick', documents: 2_000, revisions: 3 },
};
/** No replication may take longer. */
const PHASE_DEADLINE_MS = 10 * 60_000;

const log = (msg: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${msg}\n`);
const idOf = (i: number): string => `doc-${String(i).padStart(6, '0')}`;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

/** Writes the documents, each edited to `revisions` revisions, in bulks of 500 (not timed). */
async function writeSource(db: Pouch, scale: CouchScale): Promise<void> {
  const revs = new Map<string, string>();
  for (let r = 1; r <= scale.revisions; r++) {
    for (let from = 0; from < scale.documents; from += 500) {
      const docs = Array.from({ length: Math.min(500, scale.documents - from) }, (_, k) => {
        const id = idOf(from + k);
        return { _id: id, ...(revs.has(id) ? { _rev: revs.get(id) } : {}), n: from + k, revision: r, title: `Document ${from + k}`, text: TEXT };
      });
      for (const res of await db.bulkDocs(docs)) revs.set(res.id, res.rev!);
    }
  }
}

/** Times one replication, logging progress; fails when it writes fewer documents than expected. */
async function timed(what: string, expected: number, start: () => ReturnType<Pouch['replicate']['to']>): Promise<ReplicationFigures> {
  log(`${what}: replicating ${expected} documents`);
  const t0 = performance.now();
  const replication = start();
  let written = 0;
  replication.on('change', (info) => void (written = (info as { docs_written: number }).docs_written));
  const progress = setInterval(() => log(`${what}: ${written}/${expected}`), 5_000);
  const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish within ${PHASE_DEADLINE_MS / 60_000} minutes`)), PHASE_DEADLINE_MS).unref());
  let result: ReplicationResult;
  try {
    result = await Promise.race([Promise.resolve(replication), deadline]);
  } finally {
    clearInterval(progress);
  }
  const seconds = (performance.now() - t0) / 1000;
  if (result.docs_written !== expected) throw new Error(`${what} wrote ${result.docs_written} documents, not ${expected}`);
  log(`${what}: ${Math.round(expected / seconds)} documents/s (${seconds.toFixed(1)} s)`);
  return { documents: expected, seconds, perSecond: expected / seconds };
}

/** `kvt couch` against `controller` on a free port; resolves its port and a stop. */
async function startCouch(controller: string): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const args = ['couch', '--port', String(port), '--controller', controller, '--scope', 'bench'];
  const child = killOnExit(spawn(process.execPath, [...nodeFlagsFor(args), path.join(repoRoot(), 'bin', 'kvt.js'), ...args], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'] }));
  const watcher = new LineWatcher(child, [child.stdout!, child.stderr!]);
  await watcher.waitFor((l) => parseJsonLine(l)?.msg === 'couch started', 'kvt couch: "couch started"', 30_000);
  return { port, stop: () => stopChild(child, 10_000) };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  for (const a of args) if (a !== '--quick') throw new Error(`unknown flag ${a}; the only flag is --quick`);
  const scale = SCALES[args.includes('--quick') ? 'quick' : 'full'];
  const dir = makeTempDir('couch');
  const cluster = await startKvtCluster();
  const opened: Pouch[] = [];
  const open = (name: string, options = {}): Pouch => {
    const db = new PouchDB(name.startsWith('http') ? name : path.join(dir, name), options);
    opened.push(db);
    return db;
  };
  let couch: { port: number; stop(): Promise<void> } | undefined;
  try {
    couch = await startCouch(cluster.controller);
    const source = open('source');
    log(`writing ${scale.documents} documents of ${scale.revisions} revisions into PouchDB`);
    await writeSource(source, scale);
    const remote = open(`http://127.0.0.1:${couch.port}/bench`);
    await remote.info();
    const intoKvt = await timed('PouchDB → kvt', scale.documents, () => source.replicate.to(remote));
    const outOfKvt = await timed('kvt → PouchDB', scale.documents, () => open('from-kvt').replicate.from(remote));
    const pouchToPouch = await timed('PouchDB → PouchDB', scale.documents, () => source.replicate.to(open('reference')));
    const result: CouchBenchResult = { at: new Date().toISOString(), scale, loadAverage: os.loadavg()[0], intoKvt, outOfKvt, pouchToPouch };
    const results = path.join(repoRoot(), 'bench', 'results');
    fs.mkdirSync(results, { recursive: true });
    const file = path.join(results, `couch-${result.at.replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${writeCouchReport(result)}\nresults: ${path.relative(repoRoot(), file)}\n`);
  } finally {
    await Promise.all(opened.map((db) => db.close().catch(() => undefined)));
    await couch?.stop();
    await cluster.stop();
    removeDir(dir);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:couch failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
