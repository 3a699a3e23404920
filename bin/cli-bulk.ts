/**
 * `kvt import` / `kvt export`: JSON lines `{"family"?: string, "key": string, "value": string | any}`.
 * Keys and values are bytes: valid UTF-8 travels as a string, anything else as base64 in `key_b64` /
 * `value_b64` instead, so that an export imports back byte for byte. Import groups consecutive
 * entries of one family into atomic putAll batches (at most MAX_BATCH_ITEMS each) and keeps a bounded
 * number of requests in flight; a progress bar is drawn on stderr when it is a terminal.
 *
 * Import checks each line whole (JSON, fields, UTF-8, the key and value limits) before sending it, and
 * keeps one write per key in flight, so that the later line of a repeated key wins even when the
 * earlier write is retried. On the first bad line or failed write it stops reading, waits for what it
 * sent, and says which lines were imported.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { Readable, Transform } from 'node:stream';
import { SingleBar } from 'cli-progress';
import { KeyValueTable, MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_KEY_FAMILY_LENGTH, MAX_KEY_LENGTH, MAX_VALUE_LENGTH } from '../client';

type Table = KeyValueTable<Uint8Array, Uint8Array>;

/** At most this many batches or single puts are in flight at once. */
const MAX_IN_FLIGHT = 32;

/** One parsed import line. */
export interface ImportRecord {
  family: string | null;
  key: Buffer;
  value: Buffer;
}

/** A string with no lone UTF-16 surrogate (one would be written as U+FFFD, merging distinct keys). */
const WELL_FORMED = /^(?:[^\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;

/** The bytes of `text` when it is base64 in its canonical form, else undefined (so garbage never imports as bytes). */
export function base64Bytes(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Buffer.from(text, 'base64');
}

function bytesOf(record: Record<string, unknown>, field: 'key' | 'value', lineNo: number): Buffer {
  const b64 = record[`${field}_b64`];
  if (b64 !== undefined) {
    if (field in record) throw new Error(`line ${lineNo}: give "${field}" or "${field}_b64", not both`);
    const bytes = base64Bytes(b64);
    if (bytes === undefined) throw new Error(`line ${lineNo}: "${field}_b64" must be a base64 string`);
    return bytes;
  }
  if (!(field in record)) throw new Error(`line ${lineNo}: "${field}" is missing`);
  const raw = record[field];
  if (field === 'key' && typeof raw !== 'string') throw new Error(`line ${lineNo}: "key" must be a string`);
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  if (!WELL_FORMED.test(text)) throw new Error(`line ${lineNo}: "${field}" holds a lone UTF-16 surrogate (not valid UTF-8 text; use "${field}_b64")`);
  return Buffer.from(text, 'utf8');
}

/** Parses and checks one JSON line (fields, UTF-8, limits), or throws naming the line number and the field. */
export function parseImportLine(line: string, lineNo: number): ImportRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new Error(`line ${lineNo}: not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`line ${lineNo}: expected a JSON object`);
  const record = parsed as Record<string, unknown>;
  const family = record.family ?? null;
  if (family !== null && (typeof family !== 'string' || family === '')) throw new Error(`line ${lineNo}: "family" must be a non-empty string or null`);
  if (family !== null && !WELL_FORMED.test(family)) throw new Error(`line ${lineNo}: "family" holds a lone UTF-16 surrogate`);
  const key = bytesOf(record, 'key', lineNo);
  const value = bytesOf(record, 'value', lineNo);
  const familyBytes = family === null ? 0 : Buffer.byteLength(family);
  if (familyBytes > MAX_KEY_FAMILY_LENGTH) throw new Error(`line ${lineNo}: "family" is ${familyBytes} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`);
  if (key.length === 0) throw new Error(`line ${lineNo}: "key" is empty`);
  if (familyBytes + key.length > MAX_KEY_LENGTH) throw new Error(`line ${lineNo}: "key" with its family is ${familyBytes + key.length} bytes; the maximum is ${MAX_KEY_LENGTH}`);
  if (value.length > MAX_VALUE_LENGTH) throw new Error(`line ${lineNo}: "value" is ${value.length} bytes; the maximum is ${MAX_VALUE_LENGTH}`);
  return { family, key, value };
}

/**
 * `[#####-----]  45%  12,345 entries` on a terminal (cli-progress, redrawn at most 10 times a second);
 * nothing when the stream is not a terminal. It starts at the first update; once started it must be
 * ended ({@link finish} or {@link abandon}), since its redraw timer keeps the process alive.
 */
export class ProgressBar {
  private readonly bar: SingleBar;
  private started = false;

  /** @param total what `done` counts up to (the file's bytes); @param unit what the count counts */
  constructor(
    private readonly total: number,
    stream: NodeJS.WriteStream = process.stderr,
    unit = 'entries',
  ) {
    this.bar = new SingleBar({ stream, format: `[{bar}] {percentage}%  {count} ${unit}`, barsize: 30, barCompleteChar: '#', barIncompleteChar: '-', autopadding: true, fps: 10 });
  }

  /** `done` of the total are read, and `count` things written. */
  update(done: number, count: number): void {
    const payload = { count: count.toLocaleString('en-US') };
    if (this.started) {
      this.bar.update(Math.min(done, this.total), payload);
      return;
    }
    this.started = true;
    this.bar.start(this.total, Math.min(done, this.total), payload);
  }

  /** Draws the bar full with the final count and ends its line. */
  finish(count: number): void {
    this.update(this.total, count);
    this.bar.stop();
  }

  /** Ends the bar where it stands (idempotent), so that an error message starts on a line of its own. */
  abandon(): void {
    this.bar.stop();
  }
}

/** A write of some lines: the first failure of any is kept with the lines it carried. */
interface Failure {
  err: unknown;
  first: number;
  last: number;
}

/**
 * The writes in flight: at most MAX_IN_FLIGHT, and one per key, so that a later line of a key is
 * sent only once the earlier one settled (a retried earlier write cannot land after it).
 */
export class InFlight {
  private readonly running = new Set<Promise<void>>();
  private readonly byKey = new Map<string, Promise<void>>();
  failure: Failure | undefined;
  written = 0;

  async add(keys: string[], first: number, last: number, entries: number, send: () => Promise<unknown>): Promise<void> {
    const earlier = keys.map((k) => this.byKey.get(k)).filter((p) => p !== undefined);
    if (earlier.length > 0) await Promise.all(earlier);
    if (this.failure) return;
    const tracked = send().then(
      () => {
        this.written += entries;
      },
      (err: unknown) => {
        this.failure ??= { err, first, last };
      },
    );
    this.running.add(tracked);
    for (const k of keys) this.byKey.set(k, tracked);
    void tracked.finally(() => {
      this.running.delete(tracked);
      for (const k of keys) if (this.byKey.get(k) === tracked) this.byKey.delete(k);
    });
    if (this.running.size >= MAX_IN_FLIGHT) await Promise.race(this.running);
  }

  async drain(): Promise<void> {
    await Promise.all(this.running);
  }
}

/** The file's lines, decoded as UTF-8 strictly: bytes that are not UTF-8 fail instead of becoming U+FFFD. */
function strictUtf8(input: Readable): Readable {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  const decode = (chunk: Buffer | undefined, stream: boolean): string => {
    try {
      return decoder.decode(chunk, { stream });
    } catch {
      throw new Error('the file is not valid UTF-8 text (use "key_b64" / "value_b64" for binary keys and values)');
    }
  };
  return input.pipe(
    new Transform({
      readableObjectMode: true,
      transform(chunk: Buffer, _enc, done) {
        try {
          done(null, decode(chunk, true));
        } catch (err) {
          done(err as Error);
        }
      },
      flush(done) {
        try {
          done(null, decode(undefined, false));
        } catch (err) {
          done(err as Error);
        }
      },
    }),
  );
}

/** The entries of one key family gathered for one putAll, with the lines they came from. */
class PendingBatch {
  family: string | null = null;
  entries: [Buffer, Buffer][] = [];
  ids: string[] = [];
  firstLine = 0;
  lastLine = 0;
  bytes = 0;

  /**
   * Whether an entry of `family` with this id and size must go in a batch of its own: another family,
   * a full batch, or a repeated key (sent once the earlier batch settled, so the later line wins).
   */
  needsNew(family: string, id: string, size: number): boolean {
    const full = this.entries.length >= MAX_BATCH_ITEMS || this.bytes + size > MAX_BATCH_BYTES / 2;
    return family !== this.family || full || this.ids.includes(id);
  }

  add(family: string, key: Buffer, value: Buffer, id: string, size: number, line: number): void {
    if (this.entries.length === 0) this.firstLine = line;
    this.lastLine = line;
    this.family = family;
    this.entries.push([key, value]);
    this.ids.push(id);
    this.bytes += size;
  }

  /** Empties the batch, returning what it held. */
  take(): { family: string; entries: [Buffer, Buffer][]; ids: string[]; firstLine: number; lastLine: number } {
    const taken = { family: this.family!, entries: this.entries, ids: this.ids, firstLine: this.firstLine, lastLine: this.lastLine };
    this.entries = [];
    this.ids = [];
    this.bytes = 0;
    return taken;
  }
}

/** Sends the gathered batch, if it holds any entries, as one putAll. */
async function flushBatch(table: Table, batch: PendingBatch, inFlight: InFlight): Promise<void> {
  if (batch.entries.length === 0) return;
  const b = batch.take();
  await inFlight.add(b.ids, b.firstLine, b.lastLine, b.entries.length, () => table.putAll(b.family, b.entries));
}

/** Sends one record: a key without a family is put alone (after the batch so far); a family's key joins the batch. */
async function importRecord(table: Table, batch: PendingBatch, inFlight: InFlight, record: ImportRecord, lineNo: number): Promise<void> {
  const id = `${record.family ?? ''}\u0000${record.key.toString('latin1')}`;
  if (record.family === null) {
    await flushBatch(table, batch, inFlight);
    batch.family = null;
    await inFlight.add([id], lineNo, lineNo, 1, () => table.put(null, record.key, record.value));
  } else {
    const size = record.key.length + record.value.length + Buffer.byteLength(record.family);
    if (batch.needsNew(record.family, id, size)) await flushBatch(table, batch, inFlight);
    batch.add(record.family, record.key, record.value, id, size, lineNo);
  }
}

/** Imports a JSON-lines file into `table`; prints the number of entries written. */
export async function importFile(table: Table, file: string): Promise<void> {
  const progress = new ProgressBar(fs.statSync(file).size);
  try {
    await importLines(table, file, progress);
  } finally {
    progress.abandon(); // (after finish: nothing more)
  }
}

async function importLines(table: Table, file: string, progress: ProgressBar): Promise<void> {
  const input = fs.createReadStream(file);
  const inFlight = new InFlight();
  const batch = new PendingBatch();
  let entries = 0;
  let lineNo = 0;
  let badLine: Error | undefined;
  try {
    for await (const line of readline.createInterface({ input: strictUtf8(input), crlfDelay: Infinity })) {
      lineNo++;
      if (line.trim() === '') continue;
      const record = parseImportLine(line, lineNo);
      entries++;
      await importRecord(table, batch, inFlight, record, lineNo);
      if (inFlight.failure) break;
      progress.update(input.bytesRead, entries);
    }
  } catch (err) {
    badLine = err as Error;
  }
  // The lines before a bad one are imported (and said so); nothing after it is.
  if (!inFlight.failure) await flushBatch(table, batch, inFlight);
  await inFlight.drain();
  if (badLine || inFlight.failure) {
    progress.abandon();
    throw importFailure(inFlight, badLine);
  }
  progress.finish(entries);
  process.stderr.write(`imported ${entries} entries\n`);
}

/** The one-line error of an import stopped by a failed write or a bad line, saying what was imported. */
function importFailure(inFlight: InFlight, badLine: Error | undefined): Error {
  const imported = `${inFlight.written.toLocaleString('en-US')} entries were imported`;
  const failure = inFlight.failure;
  if (failure) {
    const lines = failure.first === failure.last ? `line ${failure.first}` : `lines ${failure.first}-${failure.last}`;
    const err = failure.err as Error & { code?: string };
    const code = typeof err.code === 'string' ? ` [${err.code}]` : '';
    return new Error(`${lines}: ${err.message}${code} (${imported}; the file was read no further)`);
  }
  return new Error(`${badLine!.message} (${imported}, all from the lines before it; nothing after it)`);
}

/** `bytes` as a JSON field: a string when it is valid UTF-8 (and reads back the same), else base64. */
function field(name: 'key' | 'value', bytes: Uint8Array, line: Record<string, string>): void {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buf.toString('utf8');
  if (Buffer.byteLength(text) === buf.length && Buffer.from(text, 'utf8').equals(buf)) line[name] = text;
  else line[`${name}_b64`] = buf.toString('base64');
}

/** Writes the entries of one family (or of the whole table) as JSON lines on stdout. */
export async function exportTable(table: Table, family: string | null): Promise<void> {
  // A reader that went away (`kvt export … | head`) ends the export quietly; another error, with one line.
  let closed: Error | undefined;
  const onError = (err: NodeJS.ErrnoException) => {
    closed = err;
  };
  process.stdout.on('error', onError);
  const write = (fam: string | null, key: Uint8Array, value: Uint8Array): Promise<void> | undefined => {
    const line: Record<string, string> = fam === null ? {} : { family: fam };
    field('key', key, line);
    field('value', value, line);
    if (process.stdout.write(JSON.stringify(line) + '\n')) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        process.stdout.off('drain', done);
        process.stdout.off('error', done);
        resolve();
      };
      process.stdout.once('drain', done);
      process.stdout.once('error', done);
    });
  };
  try {
    if (family !== null) {
      for await (const page of table.entryIterator(family, { maxKeysAtOnce: 1000 })) {
        for (const entry of page.items) if (!closed) await write(family, entry.key, entry.value);
        if (closed) break;
      }
    } else {
      for await (const page of table.scanEntries({ maxKeysAtOnce: 1000 })) {
        for (const entry of page.items) if (!closed) await write(entry.family, entry.key, entry.value);
        if (closed) break;
      }
    }
  } finally {
    process.stdout.off('error', onError);
  }
  if (closed && (closed as NodeJS.ErrnoException).code !== 'EPIPE') throw new Error(`cannot write the export: ${closed.message}`);
}
