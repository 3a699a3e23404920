/**
 * `npm run bench:archive`: the archive tier's figures (issue 32) on the shared data, in one run.
 *
 * - compression: the blocks the stores build, compressed on one core with their settings (MB/s of
 *   raw input, % of raw);
 * - each store loaded with every revision (KvtArchiveStore on a local cluster of real processes,
 *   CassandraArchiveStore on the Cassandra of scripts/cassandra.sh): `stats().storedBytes` as % of
 *   raw, and the same data's bytes as the segment stores / Cassandra's data directory hold them;
 * - reads: the p99 of archive reads (cold: every read decompresses its block; and with the default
 *   cache) against the p99 of hot-table reads of the same revisions, each read beside the archive
 *   read of the same revision (timeReadPairs), each backend (the hot table too) after the same
 *   untimed warm-up;
 * - the peer: the same history stored the RESTBase way (restbase-peer.ts), its size on disk after
 *   `nodetool flush`.
 * Writes bench/results/archive-<time>.json and bench/archive/report.md + report.svg.
 * Flags: --sweep (also compare brotli qualities and block sizes), --limit N (first N revisions).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as Cassandra from 'cassandra-driver';
import { ArchiveStore, CassandraArchiveStore, KeyValueTableFactory, KeyValueTableManager, KvtArchiveStore, Serializers } from '../../client';
import { newLatencyHistogram, recordMs, summarize, LatencySummary } from '../core/latency';
import { startKvtCluster } from '../peers/kvt-cluster';
import { repoRoot } from '../peers/peer';
import { compactKeyspace, ensureCassandra, flushKeyspace, keyspaceDiskBytes } from './cassandra';
import { CodecSettings, measureCodec, sweepSettings } from './codec';
import { byPage, loadRenders, rawBytesOf, TextRender } from './data';
import { ArchiveBenchResult, StoreFigures, writeArchiveReport } from './report';
import { loadRestbasePeer } from './restbase-peer';

/** The settings the stores use by default (defaultArchiveStoreOptions). */
const DEFAULTS: CodecSettings = { quality: 6, windowBits: 24, blockRevisions: 128, blockBytes: 4 * 1024 * 1024 };
/** Reads timed per reader, after the reader's first WARMUP reads (its connections, prepared statements). */
const READS = 2000;
const WARMUP = 200;
/**
 * Untimed reads of another sample before the first timed reads of each backend (the hot table included):
 * code paths run only on reads (Cassandra's JIT, the segment stores' and the client's) are then compiled,
 * and no store's figures include its process's first seconds of reading.
 */
const BACKEND_WARMUP = 2000;
/** The whole run must end within this. */
const DEADLINE_MS = 40 * 60_000;

const log = (msg: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${msg}\n`);
const started = Date.now();
function checkDeadline(): void {
  if (Date.now() - started > DEADLINE_MS) throw new Error(`bench:archive did not finish within ${DEADLINE_MS / 60_000} minutes`);
}

/** A fixed pseudo-random sample of (title, rev) to read. */
function sample(renders: TextRender[], n: number, seed = 42): TextRender[] {
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: n }, () => renders[Math.floor(next() * renders.length)]);
}

/** Reads the sample once, one at a time, untimed; checks every answer. */
async function warmUp(name: string, reads: TextRender[], read: (r: TextRender) => Promise<string | undefined>): Promise<void> {
  log(`${name}: warming up with ${reads.length} untimed reads`);
  for (const r of reads) {
    if ((await read(r)) !== r.value) throw new Error(`read of ${r.title} rev ${r.rev} returned something else`);
    checkDeadline();
  }
}

type Reader = (r: TextRender) => Promise<string | undefined>;

/** Times `read` over the sample, one at a time, after a warm-up; checks every answer. */
async function timeReads(reads: TextRender[], read: Reader): Promise<LatencySummary> {
  return (await timeReadPairs(reads, read))[0];
}

/**
 * Times `read` over the sample, one at a time, after a warm-up, and with `hot` each revision is also read
 * from the hot table just before or after (alternately): both then see the same moments of a shared,
 * noisy machine, and their ratio does not depend on when in the run each was measured. Checks every answer.
 */
async function timeReadPairs(reads: TextRender[], read: Reader, hot?: Reader): Promise<[LatencySummary, LatencySummary]> {
  const h = newLatencyHistogram();
  const hotH = newLatencyHistogram();
  const timed = async (r: TextRender, reader: Reader, into: typeof h, record: boolean) => {
    const t0 = performance.now();
    const value = await reader(r);
    const ms = performance.now() - t0;
    if (value !== r.value) throw new Error(`read of ${r.title} rev ${r.rev} returned something else`);
    if (record) recordMs(into, ms);
  };
  for (let i = 0; i < reads.length; i++) {
    if (hot && i % 2 === 1) await timed(reads[i], hot, hotH, i >= WARMUP);
    await timed(reads[i], read, h, i >= WARMUP);
    if (hot && i % 2 === 0) await timed(reads[i], hot, hotH, i >= WARMUP);
    checkDeadline();
  }
  return [summarize(h), summarize(hotH)];
}

/** Appends every page's history in batches of 64 (as culls would move it), with progress. */
async function loadArchive(store: ArchiveStore, renders: TextRender[], name: string): Promise<number> {
  const t0 = performance.now();
  let done = 0;
  for (const list of byPage(renders).values()) {
    for (let i = 0; i < list.length; i += 64) {
      await store.append(list.slice(i, i + 64));
      done += Math.min(64, list.length - i);
      checkDeadline();
    }
    if (done % 1000 < 64) log(`${name}: ${done}/${renders.length} revisions archived`);
  }
  await store.flush();
  return (performance.now() - t0) / 1000;
}

async function figures(
  name: string,
  open: (cacheBytes?: number) => ArchiveStore,
  renders: TextRender[],
  reads: TextRender[],
  warmUpReads: TextRender[],
  backendBytes: () => Promise<number>,
  hotRead: Reader,
): Promise<StoreFigures> {
  const writer = open();
  const loadSeconds = await loadArchive(writer, renders, name);
  await writer.close();
  // Sized before the reads: Cassandra's flush and compaction then run before them, not during them (right after a
  // bulk load they take the CPU the reads and their decompression need on a small machine); an archive is read at rest.
  const backend = await backendBytes();
  // Through a handle without a cache, so that the cached reads below start from an empty cache as before.
  const warm = open(0);
  await warmUp(name, warmUpReads, async (r) => (await warm.get(r.title, r.rev))?.value as string);
  await warm.close();
  const cold = open(0);
  const stats = await cold.stats();
  log(`${name}: reading ${reads.length} revisions, every read decompressing its block`);
  const [readsCold, hotBesideCold] = await timeReadPairs(reads, async (r) => (await cold.get(r.title, r.rev))?.value as string, hotRead);
  await cold.close();
  const cached = open();
  log(`${name}: reading ${reads.length} revisions through the default cache`);
  const [readsCached, hotBesideCached] = await timeReadPairs(reads, async (r) => (await cached.get(r.title, r.rev))?.value as string, hotRead);
  await cached.close();
  return {
    name,
    revisions: stats.revisions,
    rawBytes: stats.rawBytes,
    storedBytes: stats.storedBytes,
    storedPercent: (100 * stats.storedBytes) / stats.rawBytes,
    blocks: stats.blocks,
    sealedBlocks: stats.sealedBlocks,
    backendBytes: backend,
    backendPercent: (100 * backend) / stats.rawBytes,
    loadSeconds,
    loadMBps: stats.rawBytes / 1e6 / loadSeconds,
    readsCold,
    readsCached,
    hotBesideCold,
    hotBesideCached,
  };
}

/**
 * The hot table and KvtArchiveStore on a local cluster; the hot reads' p99 too; then `more` (the Cassandra
 * store), given the hot table to read beside it, before the cluster stops.
 */
async function kvtFigures<R>(
  renders: TextRender[],
  reads: TextRender[],
  warmUpReads: TextRender[],
  more: (hotRead: Reader) => Promise<R>,
): Promise<{ hot: LatencySummary; store: StoreFigures; more: R }> {
  const cluster = await startKvtCluster();
  const manager = new KeyValueTableManager({ controller: cluster.controller });
  const factory = KeyValueTableFactory.withScope('bench', { controller: cluster.controller });
  try {
    await manager.createScope('bench');
    await manager.createKeyValueTable('bench', 'hot', { partitionCount: 8 });
    await manager.createKeyValueTable('bench', 'archive', { partitionCount: 8 });
    const hot = factory.forKeyValueTable('hot', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    log(`hot table: loading ${renders.length} revisions`);
    for (const list of byPage(renders).values()) {
      for (let i = 0; i < list.length; i += 32)
        await hot.putAll(
          list[0].title,
          list.slice(i, i + 32).map((r) => [String(r.rev).padStart(10, '0'), r.value] as const),
        );
    }
    const hotRead: Reader = async (r) => (await hot.get(r.title, String(r.rev).padStart(10, '0')))?.value;
    await warmUp('hot table', warmUpReads, hotRead);
    log(`hot table: reading ${reads.length} revisions`);
    const hotReads = await timeReads(reads, hotRead);
    const bytes = { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes };
    const tables: { close(): Promise<void> }[] = [];
    const open = (cacheBytes?: number) => {
      const table = factory.forKeyValueTable('archive', bytes);
      tables.push(table);
      return new KvtArchiveStore(table, cacheBytes === undefined ? {} : { cacheBytes });
    };
    const contents = async () => {
      const d = await manager.describeKeyValueTable('bench', 'archive', { contents: true });
      return d.partitions.reduce((n, p) => n + (p.contents && 'bytes' in p.contents ? p.contents.bytes : 0), 0);
    };
    const store = await figures('KvtArchiveStore (kvt cluster)', open, renders, reads, warmUpReads, contents, hotRead);
    await Promise.all(tables.map((t) => t.close()));
    const rest = await more(hotRead);
    await hot.close();
    return { hot: hotReads, store, more: rest };
  } finally {
    await factory.close();
    await manager.close();
    await cluster.stop();
  }
}

/** CassandraArchiveStore and the RESTBase-style peer on the Cassandra of scripts/cassandra.sh. */
async function cassandraFigures(renders: TextRender[], reads: TextRender[], warmUpReads: TextRender[], hotRead: Reader): Promise<{ store: StoreFigures; restbase: ArchiveBenchResult['restbase'] }> {
  const cassandra = ensureCassandra();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const driver = require('cassandra-driver') as typeof Cassandra;
  const client = new driver.Client({ contactPoints: [cassandra.contactPoint], localDataCenter: 'datacenter1', socketOptions: { readTimeout: 60_000 } });
  const suffix = String(Date.now());
  const archiveKs = `bench_archive_${suffix}`;
  const peerKs = `bench_restbase_${suffix}`;
  let flushedBytes = 0;
  try {
    await client.connect();
    const open = (cacheBytes?: number) => new CassandraArchiveStore({ contactPoints: [cassandra.contactPoint], keyspace: archiveKs, ...(cacheBytes === undefined ? {} : { cacheBytes }) });
    const onDisk = async () => {
      flushKeyspace(archiveKs);
      // Pending bodies flushed before their block was compressed stay on disk until a compaction merges their
      // cleared cells: compact, as Cassandra would in time, so the figure is what the archive keeps.
      flushedBytes = keyspaceDiskBytes(archiveKs).total;
      compactKeyspace(archiveKs);
      return keyspaceDiskBytes(archiveKs).total;
    };
    const store = { ...(await figures('CassandraArchiveStore (Cassandra 5.0)', open, renders, reads, warmUpReads, onDisk, hotRead)), flushedBytes };
    log(`RESTBase-style peer: one row per revision in ${peerKs}.key_rev_value (deflate, 256 KiB chunks)`);
    const t0 = performance.now();
    await loadRestbasePeer(client, peerKs, renders, (done) => (done % 1000 === 0 || done === renders.length ? log(`RESTBase-style peer: ${done}/${renders.length} rows`) : undefined));
    const loadSeconds = (performance.now() - t0) / 1000;
    flushKeyspace(peerKs);
    const disk = keyspaceDiskBytes(peerKs);
    const raw = rawBytesOf(renders);
    const restbase = { rows: renders.length, diskBytes: disk.total, dataBytes: disk.data, percent: (100 * disk.total) / raw, dataPercent: (100 * disk.data) / raw, loadSeconds };
    return { store, restbase };
  } finally {
    for (const ks of [archiveKs, peerKs]) await client.execute(`DROP KEYSPACE IF EXISTS ${ks}`).catch(() => undefined);
    await client.shutdown();
    cassandra.stop();
  }
}

async function main(argv: string[]): Promise<void> {
  const limitAt = argv.indexOf('--limit');
  const limit = limitAt >= 0 ? Number(argv[limitAt + 1]) : Infinity;
  const renders = await loadRenders(limit);
  const rawBytes = rawBytesOf(renders);
  log(`shared data: ${renders.length} revisions of ${byPage(renders).size} pages, ${(rawBytes / 1e6).toFixed(1)} MB raw`);
  const codec = measureCodec(renders, DEFAULTS);
  log(
    `compression: ${codec.percentOfRaw.toFixed(2)}% of raw at ${codec.compressMBps.toFixed(0)} MB/s on one core (brotli q${DEFAULTS.quality}, lgwin ${DEFAULTS.windowBits}, ${DEFAULTS.blockRevisions} revisions a block)`,
  );
  const sweep = argv.includes('--sweep') ? sweepSettings(DEFAULTS).map((s) => (checkDeadline(), measureCodec(renders, s))) : [];
  const reads = sample(renders, READS + WARMUP);
  const warmUpReads = sample(renders, BACKEND_WARMUP, 7);
  const kvt = await kvtFigures(renders, reads, warmUpReads, (hotRead) => cassandraFigures(renders, reads, warmUpReads, hotRead));
  const cassandra = kvt.more;
  const result: ArchiveBenchResult = {
    at: new Date().toISOString(),
    revisions: renders.length,
    pages: byPage(renders).size,
    rawBytes,
    codec,
    sweep,
    hotReads: kvt.hot,
    warmUpReads: BACKEND_WARMUP,
    stores: [kvt.store, cassandra.store],
    restbase: cassandra.restbase,
  };
  const file = path.join(repoRoot(), 'bench', 'results', `archive-${result.at.replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(writeArchiveReport(result) + `\nresults: ${path.relative(repoRoot(), file)}\n`);
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`bench:archive: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
