/**
 * `kvt import` / `kvt export`: JSON lines `{"family"?: string, "key": string, "value": string | any}`.
 * Import groups consecutive entries of one family into atomic putAll batches (at most MAX_BATCH_ITEMS
 * each) and keeps a bounded number of requests in flight; a progress bar is drawn on stderr when it is
 * a terminal.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { KeyValueTable, MAX_BATCH_BYTES, MAX_BATCH_ITEMS } from '../client';

type Table = KeyValueTable<string, string>;

/** At most this many batches or single puts are in flight at once. */
const MAX_IN_FLIGHT = 32;

/** One parsed import line. */
export interface ImportRecord {
  family: string | null;
  key: string;
  value: string;
}

/** Parses one JSON line, or throws naming the line number and the field. */
export function parseImportLine(line: string, lineNo: number): ImportRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new Error(`line ${lineNo}: not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`line ${lineNo}: expected a JSON object`);
  const record = parsed as Record<string, unknown>;
  if (typeof record.key !== 'string') throw new Error(`line ${lineNo}: "key" must be a string`);
  if (!('value' in record)) throw new Error(`line ${lineNo}: "value" is missing`);
  if (record.family !== undefined && record.family !== null && typeof record.family !== 'string') {
    throw new Error(`line ${lineNo}: "family" must be a string or null`);
  }
  const value = typeof record.value === 'string' ? record.value : JSON.stringify(record.value);
  return { family: (record.family as string | undefined) ?? null, key: record.key, value };
}

/** Draws `[#####-----]  45%  12,345 entries` on a terminal; does nothing otherwise. */
export class ProgressBar {
  private last = 0;
  constructor(private readonly total: number, private readonly stream: NodeJS.WriteStream = process.stderr) {}

  update(done: number, entries: number, force = false): void {
    if (!this.stream.isTTY) return;
    const now = Date.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 0;
    const width = 30;
    const filled = Math.round(fraction * width);
    const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
    this.stream.write(`\r[${bar}] ${(fraction * 100).toFixed(0).padStart(3)}%  ${entries.toLocaleString('en-US')} entries`);
  }

  finish(entries: number): void {
    if (!this.stream.isTTY) return;
    this.update(this.total, entries, true);
    this.stream.write('\n');
  }
}

/** Keeps at most MAX_IN_FLIGHT promises running; the first failure is rethrown by `drain()`. */
class InFlight {
  private readonly running = new Set<Promise<unknown>>();
  private failure: unknown;

  async add(work: Promise<unknown>): Promise<void> {
    const tracked = work.catch((err) => {
      this.failure ??= err;
    });
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
    if (this.running.size >= MAX_IN_FLIGHT) await Promise.race(this.running);
    if (this.failure !== undefined) throw this.failure;
  }

  async drain(): Promise<void> {
    await Promise.all(this.running);
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Imports a JSON-lines file into `table`; prints the number of entries written. */
export async function importFile(table: Table, file: string): Promise<void> {
  const total = fs.statSync(file).size;
  const input = fs.createReadStream(file);
  const progress = new ProgressBar(total);
  const inFlight = new InFlight();
  let family: string | null = null;
  let batch: [string, string][] = [];
  let batchKeys = new Set<string>();
  let batchBytes = 0;
  let entries = 0;
  let lineNo = 0;

  const flush = async () => {
    if (batch.length === 0) return;
    const entriesOfBatch = batch;
    const fam = family!;
    batch = [];
    batchKeys = new Set();
    batchBytes = 0;
    await inFlight.add(table.putAll(fam, entriesOfBatch));
  };

  for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) {
    lineNo++;
    if (line.trim() === '') continue;
    const record = parseImportLine(line, lineNo);
    entries++;
    if (record.family === null) {
      await inFlight.add(table.put(null, record.key, record.value));
    } else {
      const size = Buffer.byteLength(record.key) + Buffer.byteLength(record.value) + Buffer.byteLength(record.family);
      const full = batch.length >= MAX_BATCH_ITEMS || batchBytes + size > MAX_BATCH_BYTES / 2;
      // A repeated key starts a new batch so that the later line wins, as it would one at a time.
      if (record.family !== family || full || batchKeys.has(record.key)) await flush();
      family = record.family;
      batch.push([record.key, record.value]);
      batchKeys.add(record.key);
      batchBytes += size;
    }
    progress.update(input.bytesRead, entries);
  }
  await flush();
  await inFlight.drain();
  progress.finish(entries);
  process.stderr.write(`imported ${entries} entries\n`);
}

/** Writes the entries of one family (or of the whole table) as JSON lines on stdout. */
export async function exportTable(table: Table, family: string | null): Promise<void> {
  const write = (fam: string | null, key: string, value: string) => {
    const line = JSON.stringify(fam === null ? { key, value } : { family: fam, key, value });
    if (!process.stdout.write(line + '\n')) return new Promise<void>((r) => process.stdout.once('drain', () => r()));
    return undefined;
  };
  if (family !== null) {
    for await (const page of table.entryIterator(family, { maxKeysAtOnce: 1000 })) {
      for (const entry of page.items) await write(family, entry.key, entry.value);
    }
    return;
  }
  for await (const page of table.scanEntries({ maxKeysAtOnce: 1000 })) {
    for (const entry of page.items) await write(entry.family, entry.key, entry.value);
  }
}
