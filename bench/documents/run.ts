/**
 * `npm run bench:documents`: DocumentStore on a local kvt cluster against PouchDB (`pouchdb-node`,
 * CouchDB's model on LevelDB, in this process), the same work in the same run (issue 33):
 *
 * 1. replication writes: every document in batches of 100 (`newEdits: false`), 4 batches at a time;
 * 2. interactive updates of distinct documents by 64 callers (each at the rev it knows);
 * 3. winner reads by 64 callers, of random documents;
 * 4. a full changes read (every document once).
 *
 * Each side first runs the same work at the warm-up scale on a scratch database of its own (same
 * process, same cluster), unmeasured, so that neither side's figures include its JIT compiling or
 * its first connections. `--quick`: 10,000 documents instead of 100,000 (and fewer updates and
 * reads). Writes bench/results/documents-<time>.json and bench/documents/report.md.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ReplicatedDocument } from '../../client';
import { newLatencyHistogram, recordMs, summarize } from '../core/latency';
import { repoRoot } from '../peers/peer';
import { DocumentPeer, kvtPeer, pouchPeer } from './peers';
import { DocumentsBenchResult, PhaseFigures, Scale, SideFigures, writeDocumentsReport } from './report';

const SCALES: Record<Scale['name'], Scale> = {
  full: { name: 'full', documents: 100_000, updates: 20_000, reads: 50_000 },
  quick: { name: 'quick', documents: 10_000, updates: 3_000, reads: 10_000 },
};
/** The unmeasured warm-up of each side, on a scratch database. */
const WARM_UP: Scale = { name: 'quick', documents: 2_000, updates: 1_000, reads: 2_000 };
const BATCH = 100;
const BATCHES_IN_FLIGHT = 4;
const CALLERS = 64;
const PARTITIONS = 8;
/** No phase may take longer. */
const PHASE_DEADLINE_MS = 10 * 60_000;

const log = (msg: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${msg}\n`);

const idOf = (i: number): string => `doc-${String(i).padStart(7, '0')}`;
const hashOf = (i: number): string => createHash('md5').update(idOf(i)).digest('hex');
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

function replicated(i: number): ReplicatedDocument {
  return { _id: idOf(i), _rev: `1-${hashOf(i)}`, _revisions: { start: 1, ids: [hashOf(i)] }, n: i, title: `Document ${i}`, text: TEXT };
}

/** Runs `total` operations over `callers` concurrent callers (`op(i)` for i = 0 … total − 1); times each. */
async function phase(what: string, total: number, callers: number, op: (i: number) => Promise<void>): Promise<PhaseFigures> {
  const h = newLatencyHistogram();
  let next = 0;
  let done = 0;
  const started = performance.now();
  const deadline = started + PHASE_DEADLINE_MS;
  const progress = setInterval(() => log(`${what}: ${done}/${total}`), 5_000);
  try {
    await Promise.all(
      Array.from({ length: Math.min(callers, total) }, async () => {
        for (let i = next++; i < total; i = next++) {
          if (performance.now() > deadline) throw new Error(`${what} did not finish within ${PHASE_DEADLINE_MS / 60_000} minutes`);
          const t0 = performance.now();
          await op(i);
          recordMs(h, performance.now() - t0);
          done++;
        }
      }),
    );
  } finally {
    clearInterval(progress);
  }
  const seconds = (performance.now() - started) / 1000;
  return { operations: total, seconds, perSecond: total / seconds, latency: summarize(h) };
}

/** Deterministic pseudo-random document numbers (LCG), the same on both sides. */
function readOrder(n: number, documents: number): number[] {
  let seed = 42;
  return Array.from({ length: n }, () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % documents);
}

async function runSide(peer: DocumentPeer, scale: Scale): Promise<SideFigures> {
  const batches = Math.ceil(scale.documents / BATCH);
  log(`${peer.name}: replicating ${scale.documents} documents in ${batches} batches of ${BATCH}`);
  const rep = await phase('replication', batches, BATCHES_IN_FLIGHT, async (b) => {
    const docs: ReplicatedDocument[] = [];
    for (let i = b * BATCH; i < Math.min(scale.documents, (b + 1) * BATCH); i++) docs.push(replicated(i));
    await peer.replicate(docs);
  });
  const replication = { ...rep, operations: scale.documents, perSecond: scale.documents / rep.seconds };
  log(`${peer.name}: ${Math.round(replication.perSecond)} documents/s replicated; ${scale.updates} updates by ${CALLERS} callers`);
  const updates = await phase('updates', scale.updates, CALLERS, async (i) => {
    const rev = await peer.update(idOf(i), `1-${hashOf(i)}`, { n: i, title: `Document ${i}, edited`, text: TEXT });
    if (!rev.startsWith('2-')) throw new Error(`update of ${idOf(i)} gave rev ${rev}`);
  });
  log(`${peer.name}: ${Math.round(updates.perSecond)} updates/s; ${scale.reads} winner reads by ${CALLERS} callers`);
  const order = readOrder(scale.reads, scale.documents);
  const reads = await phase('reads', scale.reads, CALLERS, async (i) => {
    const rev = await peer.read(idOf(order[i]));
    if (rev === undefined || !rev.startsWith(order[i] < scale.updates ? '2-' : '1-')) throw new Error(`read of ${idOf(order[i])} gave rev ${rev}`);
  });
  log(`${peer.name}: ${Math.round(reads.perSecond)} reads/s; reading the whole changes feed`);
  const t0 = performance.now();
  const listed = await peer.changesAll();
  const seconds = (performance.now() - t0) / 1000;
  if (listed !== scale.documents) throw new Error(`${peer.name}'s changes feed listed ${listed} documents, not ${scale.documents}`);
  const changes = { operations: listed, seconds, perSecond: listed / seconds, latency: summarize(newLatencyHistogram()) };
  log(`${peer.name}: changes feed of ${listed} documents read in ${seconds.toFixed(2)} s`);
  return { name: peer.name, loadAverage: os.loadavg()[0], replication, updates, reads, changes };
}

async function withPeer(open: () => Promise<DocumentPeer>, scale: Scale): Promise<SideFigures> {
  const peer = await open();
  try {
    const scratch = await peer.scratch();
    try {
      log(`${peer.name}: warming up on a scratch database`);
      await runSide(scratch, WARM_UP);
    } finally {
      await scratch.close();
    }
    return await runSide(peer, scale);
  } finally {
    await peer.close();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  for (const a of args) if (a !== '--quick') throw new Error(`unknown flag ${a}; the only flag is --quick`);
  const scale = SCALES[args.includes('--quick') ? 'quick' : 'full'];
  const kvt = await withPeer(() => kvtPeer(PARTITIONS), scale);
  const pouchdb = await withPeer(pouchPeer, scale);
  const result: DocumentsBenchResult = { at: new Date().toISOString(), scale, kvt, pouchdb };
  const dir = path.join(repoRoot(), 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `documents-${result.at.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${writeDocumentsReport(result)}\nresults: ${path.relative(repoRoot(), file)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:documents failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
