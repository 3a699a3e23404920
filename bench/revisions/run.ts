/**
 * `npm run bench:revisions`: PageRevisionStore (issue 31) against etcd in one run, on the shared
 * page history (../shared/data/rust-book-revisions.jsonl.gz).
 *
 * - import: every revision of the history, pages in parallel (each page's revisions in order, in
 *   batches: kvt `putRenders` of up to 64, as `kvt pages import` sends them; etcd transactions of up
 *   to 128 puts and 1.4 MB, its limits; or one write a revision), in MB/s of raw text; etcd stores
 *   the same renders under `title/rev/tid` (etcd-pages.ts). The first import after start, and later
 *   ones (after the reads) into tables of their own;
 * - getLatest at 64 callers over uniformly random pages, in rounds that alternate the peers;
 * - getLatest latency while the cluster serves a mixed open-loop load (90% getLatest, 10% new
 *   revisions) at a fixed rate, each latency measured from the operation's intended start (or from
 *   when it was sent, if that was earlier);
 * - the hot table's bytes per revision after the import (the segment stores' LevelDB directories).
 * Writes bench/results/revisions-<time>.json and bench/revisions/report.md. Flags: --quick (the first
 * 1,500 revisions, short rounds), --callers N (64), --import-callers N (32), --rate N (1,000 ops/s).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KeyValueTableFactory, KeyValueTableManager, PageRevisionStore, Serializers } from '../../client';
import { byPage, loadRenders, rawBytesOf, TextRender } from '../archive/data';
import { waitUntilIdle } from '../core/cpu';
import { parseIntegerFlag } from '../core/flags';
import { LatencySummary, newLatencyHistogram, recordMs, summarize } from '../core/latency';
import { ensureEtcdInstalled, startEtcd } from '../peers/etcd-node';
import { startKvtCluster } from '../peers/kvt-cluster';
import { repoRoot } from '../peers/peer';
import { LOG_FILE as DURABLE_LOG_FILE } from '../../segmentstore/storage/log/durable-log';
import { ETCD_TXN_BYTES, ETCD_TXN_OPS, EtcdPages } from './etcd-pages';
import { startGrpcFloor } from './grpc-floor';
import { RevisionsBenchResult, writeRevisionsReport } from './report';

/** The whole run must end within this. */
const DEADLINE_MS = 30 * 60_000;
/** The longest wait for the servers to go idle after the import. */
const SETTLE_MS = 60_000;
/** The bare-stream floor's unmeasured warm-up before its mixed load. */
const FLOOR_WARMUP_MS = 2000;
/** Share of new revisions in the mixed load. */
const WRITE_SHARE = 0.1;

/** A render to write: a new revision of the mixed load has no tid yet (the peer makes one). */
type PageWrite = Omit<TextRender, 'tid'> & { tid?: string };

/** What each peer does in the benchmark. */
interface PagesPeer {
  name: 'kvt' | 'etcd';
  put(r: PageWrite): Promise<void>;
  /** Consecutive revisions of one page, as the peer imports best: kvt `putRenders`, etcd one transaction. */
  putBatch(rs: TextRender[]): Promise<void>;
  /** The largest batch `putBatch` takes: renders, bytes of values. */
  batch: { renders: number; bytes: number };
  latest(title: string): Promise<boolean>;
}

interface Settings {
  quick: boolean;
  callers: number;
  importCallers: number;
  rate: number;
  roundMs: number;
  rounds: number;
  mixedMs: number;
}

function settingsFrom(argv: string[]): Settings {
  const quick = argv.includes('--quick');
  const flag = (name: string, dflt: number, min: number, max: number): number => {
    const i = argv.indexOf(name);
    return i < 0 ? dflt : parseIntegerFlag(name, argv[i + 1], min, max);
  };
  return {
    quick,
    callers: flag('--callers', 64, 1, 1024),
    importCallers: flag('--import-callers', 32, 1, 256),
    rate: flag('--rate', 1000, 1, 20_000),
    roundMs: quick ? 2000 : 4000,
    rounds: quick ? 2 : 4,
    mixedMs: quick ? 5000 : 15_000,
  };
}

function checkDeadline(deadline: number, what: string): void {
  if (Date.now() > deadline) throw new Error(`the revisions benchmark ran past its ${DEADLINE_MS / 60_000} minutes during ${what}`);
}

/** A page's revisions in order, cut into the peer's batches. */
function batchesOf(peer: PagesPeer, page: TextRender[]): TextRender[][] {
  const out: TextRender[][] = [];
  let batch: TextRender[] = [];
  let bytes = 0;
  for (const r of page) {
    const size = Buffer.byteLength(r.value) + 200;
    if (batch.length > 0 && (batch.length >= peer.batch.renders || bytes + size > peer.batch.bytes)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(r);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/**
 * Imports every page, `callers` pages at once, each page's revisions in order: in the peer's batches
 * (a page's batches one after another), or one write a revision; resolves seconds taken.
 */
async function importAll(peer: PagesPeer, pages: TextRender[][], callers: number, batched: boolean, deadline: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pages.length) {
      const page = pages[next++];
      for (const batch of batched ? batchesOf(peer, page) : page.map((r) => [r])) {
        checkDeadline(deadline, `the ${peer.name} import`);
        await (batched ? peer.putBatch(batch) : peer.put(batch[0]));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(callers, pages.length) }, worker));
  return (performance.now() - started) / 1000;
}

/** One closed-loop round of getLatest by `callers` callers for `ms`; resolves completed reads. */
async function latestRound(peer: PagesPeer, titles: string[], callers: number, ms: number, histogram = newLatencyHistogram()): Promise<number> {
  const end = performance.now() + ms;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const title = titles[Math.floor(Math.random() * titles.length)];
      const t0 = performance.now();
      if (!(await peer.latest(title))) throw new Error(`${peer.name}: no latest render of ${title}`);
      recordMs(histogram, performance.now() - t0);
      done++;
    }
  };
  await Promise.all(Array.from({ length: callers }, worker));
  return done;
}

/** The open-loop mixed load: `rate` operations a second for `ms`, 10% new revisions; latencies from intended starts (or earlier sends). */
async function mixedLoad(
  peer: Pick<PagesPeer, 'put' | 'latest'>,
  pages: Map<string, TextRender[]>,
  rate: number,
  ms: number,
): Promise<{ reads: LatencySummary; writes: LatencySummary; late: number }> {
  const titles = [...pages.keys()];
  const nextRev = new Map(titles.map((t) => [t, Math.max(...pages.get(t)!.map((r) => r.rev)) + 1_000_000]));
  const reads = newLatencyHistogram();
  const writes = newLatencyHistogram();
  const total = Math.floor((rate * ms) / 1000);
  const start = performance.now();
  const inFlight = new Set<Promise<void>>();
  let late = 0;
  for (let i = 0; i < total; i++) {
    const intended = start + (i * 1000) / rate;
    const wait = intended - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    if (performance.now() - intended > 100) late++;
    // Measured from its intended start, or from when it was sent if that was earlier: a timer cannot
    // wait less than 1 ms, so an operation due within 1 ms goes at once, and measuring it from its
    // intended start would make it look up to 1 ms faster than it was.
    const from = Math.min(intended, performance.now());
    const title = titles[Math.floor(Math.random() * titles.length)];
    const op =
      Math.random() < WRITE_SHARE
        ? (() => {
            const history = pages.get(title)!;
            const rev = nextRev.get(title)!;
            nextRev.set(title, rev + 1);
            const body = history[Math.floor(Math.random() * history.length)];
            return peer.put({ title, rev, value: body.value, headers: body.headers }).then(() => recordMs(writes, performance.now() - from));
          })()
        : peer.latest(title).then(() => recordMs(reads, performance.now() - from));
    const tracked: Promise<void> = op.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  }
  await Promise.all(inFlight);
  return { reads: summarize(reads), writes: summarize(writes), late };
}

/** The UTF-8 size of each page's latest render (highest rev, then tid), by title: what a getLatest answers. */
function latestSizes(pages: Map<string, TextRender[]>): (title: string) => number {
  const sizes = new Map<string, number>();
  for (const [title, history] of pages) {
    const latest = history.reduce((a, b) => (b.rev > a.rev || (b.rev === a.rev && (b.tid ?? '') > (a.tid ?? '')) ? b : a));
    sizes.set(title, Buffer.byteLength(latest.value));
  }
  return (title) => sizes.get(title) ?? 0;
}

/** What a store's LevelDB directory holds: sorted tables, LevelDB's own log (the memtable's data), kvt's durable log (a preallocated ring) and the rest. */
interface DiskBytes {
  tables: number;
  levelLog: number;
  durableLog: number;
  other: number;
}

/** Bytes of the files in `dir` and below, by what they are. */
function levelDbBytes(dir: string, out: DiskBytes = { tables: 0, levelLog: 0, durableLog: 0, other: 0 }): DiskBytes {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) levelDbBytes(p, out);
    else {
      const size = fs.statSync(p).size;
      if (e.name.endsWith('.ldb') || e.name.endsWith('.sst')) out.tables += size;
      else if (e.name.endsWith('.log')) out.levelLog += size;
      else if (e.name === DURABLE_LOG_FILE) out.durableLog += size;
      else out.other += size;
    }
  }
  return out;
}

async function main(): Promise<void> {
  const s = settingsFrom(process.argv.slice(2));
  const deadline = Date.now() + DEADLINE_MS;
  const log = (line: string): void => console.log(`[bench:revisions] ${line}`);
  const renders = await loadRenders(s.quick ? 1500 : Infinity);
  const pages = byPage(renders);
  const titles = [...pages.keys()];
  const rawBytes = rawBytesOf(renders);
  log(`${renders.length} revisions of ${pages.size} pages, ${(rawBytes / 1e6).toFixed(1)} MB raw`);

  const etcdVersionLine = ensureEtcdInstalled(log);
  if (!etcdVersionLine) throw new Error('etcd is not installed and scripts/install-etcd.sh could not install it');
  const cluster = await startKvtCluster();
  const etcd = await startEtcd();
  const manager = new KeyValueTableManager({ controller: cluster.controller });
  const factory = KeyValueTableFactory.withScope('bench', { controller: cluster.controller });
  const etcdPages = new EtcdPages(etcd.endpoint);
  try {
    await manager.createScope('bench');
    await manager.createKeyValueTable('bench', 'pages', { partitionCount: 8 });
    const table = factory.forKeyValueTable('pages', { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytesView });
    const store = new PageRevisionStore(table);
    const kvt: PagesPeer = {
      name: 'kvt',
      put: async (r) => {
        await store.putRender({ title: r.title, rev: r.rev, tid: r.tid, value: r.value, headers: r.headers });
      },
      putBatch: async (rs) => {
        await store.putRenders(rs);
      },
      // What `kvt pages import` sends at once.
      batch: { renders: 64, bytes: 8 * 1024 * 1024 },
      // As an HTTP front end reads a page to send it: its bytes, undecoded (etcd answers bytes too).
      latest: async (title) => (await store.getLatest(title, { bytes: true })) !== null,
    };
    const etcdPeer: PagesPeer = {
      name: 'etcd',
      put: (r) => etcdPages.put(r.title, r.rev, r.tid ?? randomUUID(), r.value, r.headers),
      putBatch: (rs) => etcdPages.putMany(rs),
      batch: { renders: ETCD_TXN_OPS, bytes: ETCD_TXN_BYTES },
      latest: async (title) => (await etcdPages.latest(title)) !== null,
    };
    const peers = [kvt, etcdPeer];

    // Each import into a table (or etcd key prefix) of its own. The first ones (batched) fill what the
    // reads use; the others run after the reads and the mixed load, at the same stage for both peers:
    // each side's code has run (kvt's client and stores compile theirs as they go) and kvt's durable
    // logs have grown to the import's rate. The import target compares imports of that stage.
    const later = async (name: string): Promise<{ kvt: PageRevisionStore; etcd: EtcdPages }> => {
      await manager.createKeyValueTable('bench', `pages-${name}`, { partitionCount: 8 });
      const table = factory.forKeyValueTable(`pages-${name}`, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytesView });
      return { kvt: new PageRevisionStore(table), etcd: new EtcdPages(etcd.endpoint, `${name}/`) };
    };
    const [batchedLater, single] = [await later('batched'), await later('single')];
    const imports: RevisionsBenchResult['imports'] = { kvt: { first: 0, batched: 0, single: 0 }, etcd: { first: 0, batched: 0, single: 0 } };
    type ImportVariant = [PagesPeer, 'first' | 'batched' | 'single'];
    const variants: ImportVariant[] = [
      [kvt, 'first'],
      [etcdPeer, 'first'],
      [{ ...kvt, putBatch: async (rs) => void (await batchedLater.kvt.putRenders(rs)) }, 'batched'],
      [{ ...etcdPeer, putBatch: (rs) => batchedLater.etcd.putMany(rs) }, 'batched'],
      [{ ...kvt, put: async (r) => void (await single.kvt.putRender({ title: r.title, rev: r.rev, tid: r.tid, value: r.value, headers: r.headers })) }, 'single'],
      [{ ...etcdPeer, put: (r) => single.etcd.put(r.title, r.rev, r.tid ?? randomUUID(), r.value, r.headers) }, 'single'],
    ];
    const importVariant = async ([peer, kind]: ImportVariant): Promise<void> => {
      const seconds = await importAll(peer, [...pages.values()], s.importCallers, kind !== 'single', deadline);
      imports[peer.name][kind] = rawBytes / 1e6 / seconds;
      const what = { first: 'in batches, the first import after start', batched: 'in batches', single: 'one write a revision' }[kind];
      log(`import ${peer.name} ${what}: ${seconds.toFixed(1)} s, ${(rawBytes / 1e6 / seconds).toFixed(1)} MB/s`);
    };
    // The first imports fill the tables the reads below use; the others run after the reads, so
    // that no second copy of the history is being compacted while they are measured.
    for (const v of variants.slice(0, 2)) await importVariant(v);
    // The hot table alone: let the stores apply their durable logs to LevelDB, then measure their directories.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const disk = cluster.stores.map((st) => levelDbBytes(path.join(st.dataDir, 'leveldb')));
    const sum = (f: (d: DiskBytes) => number): number => disk.reduce((n, d) => n + f(d), 0);
    const hotBytes = sum((d) => d.tables + d.levelLog + d.other);
    log(`hot table: ${(hotBytes / renders.length).toFixed(0)} bytes per revision in LevelDB (${(hotBytes / 1e6).toFixed(1)} MB), durable log rings ${(sum((d) => d.durableLog) / 1e6).toFixed(1)} MB`);
    // Reads start from idle servers, as every case of `npm run bench` does: an import leaves LevelDB
    // (and etcd's backend) compacting for a while, which would land in whichever reads come first.
    const started = Date.now();
    await waitUntilIdle({ kind: 'pids', pids: () => cluster.stores.map((st) => st.pid) }, SETTLE_MS);
    await waitUntilIdle({ kind: 'pids', pids: () => [etcd.pid] }, SETTLE_MS);
    log(`servers idle after ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const latest: Record<string, { reads: number; seconds: number; latency: ReturnType<typeof newLatencyHistogram> }> = {};
    for (const peer of peers) latest[peer.name] = { reads: 0, seconds: 0, latency: newLatencyHistogram() };
    for (const peer of peers) await latestRound(peer, titles, s.callers, 500); // warm-up
    for (let round = 0; round < s.rounds; round++) {
      // Each round is led by another peer, so the machine's drift falls on both alike.
      for (const peer of round % 2 === 0 ? peers : [...peers].reverse()) {
        checkDeadline(deadline, 'getLatest');
        latest[peer.name].reads += await latestRound(peer, titles, s.callers, s.roundMs, latest[peer.name].latency);
        latest[peer.name].seconds += s.roundMs / 1000;
      }
    }
    const getLatest = Object.fromEntries(peers.map((p) => [p.name, { perSecond: latest[p.name].reads / latest[p.name].seconds, latency: summarize(latest[p.name].latency) }]));
    for (const p of peers) log(`getLatest ${p.name}: ${getLatest[p.name].perSecond.toFixed(0)}/s at ${s.callers} callers, p99 ${getLatest[p.name].latency.p99Ms} ms`);

    const mixed: RevisionsBenchResult['mixed'] = {};
    let grpcFloor: RevisionsBenchResult['grpcFloor'] | undefined;
    for (const peer of peers) {
      checkDeadline(deadline, 'the mixed load');
      mixed[peer.name] = await mixedLoad(peer, pages, s.rate, s.mixedMs);
      log(`mixed ${peer.name} at ${s.rate}/s: getLatest p99 ${mixed[peer.name].reads.p99Ms} ms, new revision p99 ${mixed[peer.name].writes.p99Ms} ms`);
      if (peer !== kvt) continue;
      // Right after kvt's, the same load through a bare grpc-js stream: the floor of its latencies here.
      const floor = await startGrpcFloor(latestSizes(pages));
      try {
        // Unmeasured first, as kvt's client and stores are warm by now: a new stream's first ~60 calls
        // (its connection, grpc-js's code compiling) take 30-55 ms and would be its p99 on their own.
        await mixedLoad(floor, pages, s.rate, FLOOR_WARMUP_MS);
        grpcFloor = await mixedLoad(floor, pages, s.rate, s.mixedMs);
      } finally {
        await floor.close();
      }
      log(`mixed through a bare grpc-js stream at ${s.rate}/s: "getLatest" p99 ${grpcFloor.reads.p99Ms} ms, "new revision" p99 ${grpcFloor.writes.p99Ms} ms`);
    }

    for (const v of variants.slice(2)) await importVariant(v);
    batchedLater.etcd.close();
    single.etcd.close();

    const result: RevisionsBenchResult = {
      at: new Date().toISOString(),
      quick: s.quick,
      etcdVersion: etcdVersionLine,
      revisions: renders.length,
      pages: pages.size,
      rawBytes,
      callers: s.callers,
      importCallers: s.importCallers,
      rate: s.rate,
      imports,
      hotBytesPerRevision: hotBytes / renders.length,
      hotTableBytes: sum((d) => d.tables),
      hotLevelLogBytes: sum((d) => d.levelLog),
      hotOtherBytes: sum((d) => d.other),
      durableLogBytes: sum((d) => d.durableLog),
      getLatest,
      mixed,
      grpcFloor: grpcFloor!,
    };
    const results = path.join(repoRoot(), 'bench', 'results');
    fs.mkdirSync(results, { recursive: true });
    const json = path.join(results, `revisions-${result.at.replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(json, JSON.stringify(result, null, 2));
    const report = writeRevisionsReport(result);
    console.log(fs.readFileSync(report, 'utf8'));
    log(`wrote ${path.relative(repoRoot(), json)} and ${path.relative(repoRoot(), report)}`);
    await store.close();
  } finally {
    etcdPages.close();
    await factory.close();
    await manager.close();
    await etcd.stop();
    await cluster.stop();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:revisions failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
