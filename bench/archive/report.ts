/**
 * The archive benchmark's report: a Markdown summary with the ratios the issue asks for
 * (bench/archive/report.md) and a bar chart of stored size as % of raw (bench/archive/report.svg).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../peers/peer';
import type { LatencySummary } from '../core/latency';
import type { CodecResult } from './codec';

/** One store's figures. */
export interface StoreFigures {
  name: string;
  revisions: number;
  rawBytes: number;
  storedBytes: number;
  storedPercent: number;
  blocks: number;
  sealedBlocks: number;
  /** The archive's data as the backend holds it (segment stores' key + value bytes, or Cassandra's files after flush and compaction). */
  backendBytes: number;
  /** Cassandra: its files right after the flush, before the compaction. */
  flushedBytes?: number;
  backendPercent: number;
  loadSeconds: number;
  loadMBps: number;
  readsCold: LatencySummary;
  readsCached: LatencySummary;
  /** Hot-table reads of the same revisions, each beside the cold (cached) read of it. */
  hotBesideCold: LatencySummary;
  hotBesideCached: LatencySummary;
}

/** Everything one run measured. */
export interface ArchiveBenchResult {
  at: string;
  revisions: number;
  pages: number;
  rawBytes: number;
  codec: CodecResult;
  sweep: CodecResult[];
  hotReads: LatencySummary;
  /** Untimed reads each backend served before its timed reads. */
  warmUpReads: number;
  stores: StoreFigures[];
  restbase: { rows: number; diskBytes: number; dataBytes: number; percent: number; dataPercent: number; loadSeconds: number };
}

const pct = (n: number): string => `${n.toFixed(2)}%`;
const ms = (n: number): string => `${n.toFixed(2)} ms`;
const mb = (n: number): string => `${(n / 1e6).toFixed(2)} MB`;

/** The Markdown report, written to bench/archive/report.md with the chart beside it; returns it. */
export function writeArchiveReport(r: ArchiveBenchResult): string {
  const md = renderArchiveReport(r);
  const dir = path.join(repoRoot(), 'bench', 'archive');
  fs.writeFileSync(path.join(dir, 'report.md'), md + '\n![stored size as % of raw](report.svg)\n');
  fs.writeFileSync(path.join(dir, 'report.svg'), chart(r));
  return md;
}

/** The Markdown report of a run: each store's size and read latencies, and their ratios to the hot table's. */
export function renderArchiveReport(r: ArchiveBenchResult): string {
  const hot = r.hotReads.p99Ms;
  const lines = [
    `# Archive tier (${r.at.slice(0, 16).replace('T', ' ')} UTC)`,
    '',
    `${r.revisions.toLocaleString('en-US')} revisions of ${r.pages} pages, ${mb(r.rawBytes)} raw (shared/data/rust-book-revisions.jsonl.gz). Command: \`npm run bench:archive\`.`,
    '',
    `Compression on one core (brotli q${r.codec.quality}, lgwin ${r.codec.windowBits}, blocks of ${r.codec.blockRevisions} revisions or ${r.codec.blockBytes / 1024 / 1024} MiB): ` +
      `${pct(r.codec.percentOfRaw)} of raw, **${r.codec.compressMBps.toFixed(0)} MB/s** compressing, ${r.codec.decompressMBps.toFixed(0)} MB/s decompressing (${r.codec.blocks} blocks).`,
    '',
    '| store | stored (stats) | % of raw | as the backend holds it | % of raw | load MB/s | read p50 / p99 cold | read p50 / p99 cached | hot p99 beside cold / cached | p99 / hot p99 |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.stores.map((s) =>
      [
        s.name,
        mb(s.storedBytes),
        `**${pct(s.storedPercent)}**`,
        mb(s.backendBytes),
        `${pct(s.backendPercent)}${s.flushedBytes ? ` (${pct((100 * s.flushedBytes) / s.rawBytes)} before compaction)` : ''}`,
        s.loadMBps.toFixed(1),
        `${ms(s.readsCold.p50Ms)} / ${ms(s.readsCold.p99Ms)}`,
        `${ms(s.readsCached.p50Ms)} / ${ms(s.readsCached.p99Ms)}`,
        `${ms(s.hotBesideCold.p99Ms)} / ${ms(s.hotBesideCached.p99Ms)}`,
        `**${(s.readsCold.p99Ms / s.hotBesideCold.p99Ms).toFixed(1)}×** cold (${(s.readsCold.p99Ms / hot).toFixed(1)}× the hot p99 alone), ${(s.readsCached.p99Ms / s.hotBesideCached.p99Ms).toFixed(1)}× cached (${(s.readsCached.p99Ms / hot).toFixed(1)}×)`,
      ]
        .join(' | ')
        .replace(/^/, '| ')
        .replace(/$/, ' |'),
    ),
    `| RESTBase-style peer: one row per revision, key_rev_value, deflate 256 KiB (Cassandra files after flush) | | | ${mb(r.restbase.diskBytes)} | **${pct(r.restbase.percent)}** (Data.db ${pct(r.restbase.dataPercent)}) | ${(r.rawBytes / 1e6 / r.restbase.loadSeconds).toFixed(1)} | | | | |`,
    '',
    `Hot-table reads of the same revisions (one key per revision on the same kvt cluster), alone: p50 ${ms(r.hotReads.p50Ms)}, p99 ${ms(hot)}; ` +
      "each archive read is paired with a hot read of the same revision just before or after it (alternately), so that both see the same moments of the shared machine, and a store's ratio is against the hot reads beside its own (the kvt cluster stays up while Cassandra's figures are taken); in brackets, against the hot reads alone. " +
      `Reads go one at a time; each backend, the hot table too, first serves ${r.warmUpReads.toLocaleString('en-US')} untimed reads of another sample, and each reader's first 200 reads are untimed; each store is sized (Cassandra flushed and compacted) after its load, before its reads. ` +
      'Cold archive reads decompress a whole block each (no cache); cached reads use the default 64 MiB cache of decompressed blocks. ' +
      "The kvt store's backend figure is the key + value bytes its segment stores count; Cassandra's is its files after `nodetool flush` and `nodetool compact`.",
  ];
  if (r.sweep.length) {
    lines.push('', '| revisions a block | MiB a block | quality | % of raw | compress MB/s | decompress MB/s |', '|---|---|---|---|---|---|');
    for (const s of r.sweep)
      lines.push(`| ${s.blockRevisions} | ${s.blockBytes / 1024 / 1024} | ${s.quality} | ${pct(s.percentOfRaw)} | ${s.compressMBps.toFixed(0)} | ${s.decompressMBps.toFixed(0)} |`);
  }
  return lines.join('\n') + '\n';
}

/** Horizontal bars: stored size as % of raw, per store and the peer. */
function chart(r: ArchiveBenchResult): string {
  const bars: [string, number][] = [
    ...r.stores.map((s) => [`${s.name} (stats)`, s.storedPercent] as [string, number]),
    ...r.stores.map((s) => [`${s.name} (backend)`, s.backendPercent] as [string, number]),
    ['RESTBase-style peer (Cassandra files)', r.restbase.percent],
  ];
  const max = Math.max(...bars.map(([, v]) => v), 1);
  const width = 760;
  const label = 330;
  const rows = bars.map(([name, v], i) => {
    const y = 40 + i * 30;
    const w = ((width - label - 80) * v) / max;
    return `<text x="${label - 8}" y="${y + 15}" text-anchor="end">${name.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text><rect x="${label}" y="${y}" width="${w.toFixed(1)}" height="20" fill="${i < r.stores.length * 2 ? '#3b7dd8' : '#d8863b'}"/><text x="${label + w + 6}" y="${y + 15}">${v.toFixed(2)}%</text>`;
  });
  const height = 50 + bars.length * 30;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="13"><text x="10" y="22" font-weight="bold">Stored size as % of raw (${(r.rawBytes / 1e6).toFixed(1)} MB, ${r.revisions} revisions)</text>${rows.join('')}</svg>\n`;
}
