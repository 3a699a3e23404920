/**
 * The layer benchmarks' reports (documents, the CouchDB endpoint, the archive), rendered from
 * constructed results without writing their files: each ratio divides kvt's figure by the right
 * reference, the one the README quotes.
 */
import { describe, expect, it } from 'vitest';
import type { LatencySummary } from '../../../bench/core/latency';
import { ArchiveBenchResult, renderArchiveReport, StoreFigures } from '../../../bench/archive/report';
import { CouchBenchResult, renderCouchReport } from '../../../bench/couch/report';
import { DocumentsBenchResult, PhaseFigures, renderDocumentsReport, SideFigures } from '../../../bench/documents/report';

const latency = (p50Ms: number, p99Ms: number): LatencySummary => ({ count: 1000, p50Ms, p99Ms, p999Ms: p99Ms * 2, maxMs: p99Ms * 3, meanMs: p50Ms });
const phase = (perSecond: number, seconds = 2): PhaseFigures => ({ operations: perSecond * seconds, seconds, perSecond, latency: latency(1, 4) });
const side = (name: string, rates: [number, number, number, number]): SideFigures => ({
  name,
  loadAverage: 1.5,
  replication: phase(rates[0]),
  updates: phase(rates[1]),
  reads: phase(rates[2]),
  changes: phase(rates[3], 0.5),
});

/** The cells of the table row that starts with `label`. */
const row = (markdown: string, label: string): string[] => {
  const line = markdown.split('\n').find((l) => l.startsWith(`| ${label}`));
  if (!line) throw new Error(`no row ${label} in:\n${markdown}`);
  return line.slice(2, -2).split(' | ');
};

describe('renderDocumentsReport', () => {
  it('divides each of kvt’s rates by PouchDB’s for the same work', () => {
    const r: DocumentsBenchResult = {
      at: '2026-11-28T10:00:00.000Z',
      scale: { name: 'quick', documents: 10_000, updates: 5_000, reads: 20_000 },
      kvt: side('kvt', [3_000, 5_000, 30_000, 200_000]),
      pouchdb: side('pouchdb-node', [6_000, 4_000, 15_000, 50_000]),
    };
    const md = renderDocumentsReport(r);
    expect(row(md, 'replication writes')[3]).toBe('**0.50×**');
    expect(row(md, 'interactive updates')[3]).toBe('**1.25×**');
    expect(row(md, 'winner reads')[3]).toBe('**2.00×**');
    expect(row(md, 'full changes read')).toEqual(['full changes read (10,000 documents)', '200,000 documents/s', '50,000 documents/s', '**4.00×**', '0.50 s', '0.50 s']);
  });
});

describe('renderCouchReport', () => {
  it('divides each replication through kvt by PouchDB → PouchDB', () => {
    const r: CouchBenchResult = {
      at: '2026-11-28T10:00:00.000Z',
      scale: { name: 'quick', documents: 1_000, revisions: 3 },
      loadAverage: 1,
      intoKvt: { documents: 1_000, seconds: 2, perSecond: 500 },
      outOfKvt: { documents: 1_000, seconds: 0.5, perSecond: 2_000 },
      pouchToPouch: { documents: 1_000, seconds: 1, perSecond: 1_000 },
    };
    const md = renderCouchReport(r);
    expect(row(md, 'PouchDB → kvt')).toEqual(['PouchDB → kvt (into an empty database)', '500', '2.0', '**0.50×**']);
    expect(row(md, 'kvt → PouchDB')).toEqual(['kvt → PouchDB (into an empty database)', '2,000', '0.5', '**2.00×**']);
    expect(row(md, 'PouchDB → PouchDB')[3]).toBe('1.00×');
  });
});

describe('renderArchiveReport', () => {
  it('gives each store’s read p99 over the hot reads beside it, and over the hot reads alone', () => {
    const store: StoreFigures = {
      name: 'kvt',
      revisions: 100,
      rawBytes: 10e6,
      storedBytes: 1e6,
      storedPercent: 10,
      blocks: 4,
      sealedBlocks: 3,
      backendBytes: 1.2e6,
      backendPercent: 12,
      loadSeconds: 1,
      loadMBps: 10,
      readsCold: latency(2, 12),
      readsCached: latency(0.5, 3),
      hotBesideCold: latency(0.5, 4),
      hotBesideCached: latency(0.5, 2),
    };
    const codec = {
      quality: 9,
      windowBits: 24,
      blockRevisions: 64,
      blockBytes: 4 * 1024 * 1024,
      blocks: 4,
      rawBytes: 10e6,
      compressedBytes: 1e6,
      percentOfRaw: 10,
      compressMBps: 20,
      decompressMBps: 300,
    };
    const r: ArchiveBenchResult = {
      at: '2026-11-28T10:00:00.000Z',
      revisions: 100,
      pages: 2,
      rawBytes: 10e6,
      codec,
      sweep: [],
      hotReads: latency(0.4, 6),
      warmUpReads: 100,
      stores: [store],
      restbase: { rows: 100, diskBytes: 5e6, dataBytes: 4e6, percent: 50, dataPercent: 40, loadSeconds: 2 },
    };
    const cells = row(renderArchiveReport(r), 'kvt');
    expect(cells[2]).toBe('**10.00%**');
    expect(cells[9]).toBe('**3.0×** cold (2.0× the hot p99 alone), 1.5× cached (0.5×)');
  });
});
