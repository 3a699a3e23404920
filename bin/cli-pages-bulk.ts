/**
 * `kvt pages import` / `kvt pages export`: revision histories as JSON lines, one render a line —
 * the format of ../shared/data (`{"page", "rev", "ts", "text", …}`), gzip or not:
 *
 * - `page` → title, `rev` → rev, `text` → value (or `text_b64` for bytes);
 * - `tid` when given, else derived from `ts` (Unix seconds) as a v1 UUID of that time with a fixed
 *   clock sequence and node, so importing a file again writes the same renders (idempotent);
 * - optional `headers` (strings) and `parts` (name → text; `parts_b64` for bytes); other fields
 *   (`commit`, …) are ignored.
 *
 * Import checks each line whole before sending it, buffers a page's consecutive lines into batches of
 * up to 64 renders written with one `putRenders` (few atomic updates each), keeps up to 32 batches in
 * flight (a repeated render waits for its earlier line's batch, so the later line wins), and draws a
 * progress bar on a terminal. Precedence is by (rev, tid), so the order they land in does not matter.
 * A render is never split between updates, so a stopped import never leaves part of a render: at the
 * first bad line or failed write it writes what it read before the line, stops reading, waits for what
 * it sent, and says which line and how much was imported.
 * Export writes the same lines (with `tid`), newest first per page; they import back byte for byte.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { Readable, Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import { InvalidArgumentError, MAX_KEY_FAMILY_LENGTH, PageRevisionStore, Render, RenderBody, RenderInput, timeOf, timeUuidOf } from '../client';
import { base64Bytes, InFlight, ProgressBar } from './cli-bulk';

/** Clock sequence and node of the tids an import derives from `ts` ("kvtimp"; its multicast bit is set). */
const IMPORT_CLOCK_SEQUENCE = 0;
const IMPORT_NODE = Buffer.from('kvtimp', 'latin1');

/** The tid an import gives a line without one: the v1 UUID of its `ts` (seconds), always the same. */
export function importTid(ts: number): string {
  return timeUuidOf(Math.round(ts * 1000), IMPORT_CLOCK_SEQUENCE, IMPORT_NODE);
}

function fail(lineNo: number, message: string): never {
  throw new Error(`line ${lineNo}: ${message}`);
}

function body(record: Record<string, unknown>, field: string, lineNo: number): RenderBody {
  const b64 = record[`${field}_b64`];
  if (b64 !== undefined) {
    if (record[field] !== undefined) fail(lineNo, `give "${field}" or "${field}_b64", not both`);
    return base64Bytes(b64) ?? fail(lineNo, `"${field}_b64" must be a base64 string`);
  }
  const text = record[field];
  if (typeof text !== 'string') fail(lineNo, text === undefined ? `"${field}" is missing` : `"${field}" must be a string`);
  return text;
}

function parts(record: Record<string, unknown>, lineNo: number): Record<string, RenderBody> | undefined {
  const out: Record<string, RenderBody> = {};
  for (const [field, decode] of [
    ['parts', (v: string) => v],
    ['parts_b64', (v: string, name: string) => base64Bytes(v) ?? fail(lineNo, `"parts_b64.${name}" must be a base64 string`)],
  ] as const) {
    const given = record[field];
    if (given === undefined) continue;
    if (typeof given !== 'object' || given === null || Array.isArray(given)) fail(lineNo, `"${field}" must be an object of strings`);
    for (const [name, v] of Object.entries(given)) {
      if (typeof v !== 'string') fail(lineNo, `"${field}.${name}" must be a string`);
      out[name] = decode(v, name);
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Parses and checks one line into a render, or throws naming the line number and the field. */
export function parseRevisionLine(line: string, lineNo: number): RenderInput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    fail(lineNo, 'not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) fail(lineNo, 'expected a JSON object');
  const r = parsed as Record<string, unknown>;
  if (typeof r.page !== 'string' || r.page === '') fail(lineNo, '"page" must be a non-empty string');
  const titleBytes = Buffer.byteLength(r.page);
  if (titleBytes > MAX_KEY_FAMILY_LENGTH) fail(lineNo, `"page" is ${titleBytes} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`);
  if (typeof r.rev !== 'number' || !Number.isSafeInteger(r.rev) || r.rev < 0) fail(lineNo, `"rev" must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
  let tid: string;
  if (r.tid !== undefined) {
    if (typeof r.tid !== 'string') fail(lineNo, '"tid" must be a time-based UUID string');
    tid = r.tid;
  } else {
    if (typeof r.ts !== 'number' || !Number.isFinite(r.ts) || r.ts < 0) fail(lineNo, r.ts === undefined ? '"ts" (or "tid") is missing' : '"ts" must be a non-negative number of seconds');
    tid = importTid(r.ts);
  }
  if (r.headers !== undefined && (typeof r.headers !== 'object' || r.headers === null || Array.isArray(r.headers))) fail(lineNo, '"headers" must be an object of strings');
  return { title: r.page, rev: r.rev, tid, value: body(r, 'text', lineNo), headers: r.headers as Record<string, string> | undefined, parts: parts(r, lineNo) };
}

/** The file's text, gunzipped when it starts with the gzip magic, decoded as UTF-8 strictly. */
function linesOf(file: string, input: fs.ReadStream): AsyncIterable<string> {
  const head = Buffer.alloc(2);
  const fd = fs.openSync(file, 'r');
  const read = fs.readSync(fd, head, 0, 2, 0);
  fs.closeSync(fd);
  const raw: Readable = read === 2 && head[0] === 0x1f && head[1] === 0x8b ? input.pipe(zlib.createGunzip()) : input;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const text = raw.pipe(
    new Transform({
      readableObjectMode: true,
      transform(chunk: Buffer, _enc, done) {
        try {
          done(null, decoder.decode(chunk, { stream: true }));
        } catch {
          done(new Error('the file is not valid UTF-8 text (use "text_b64" for bytes)'));
        }
      },
      flush(done) {
        try {
          done(null, decoder.decode());
        } catch {
          done(new Error('the file ends inside a UTF-8 character'));
        }
      },
    }),
  );
  raw.on('error', (err) => text.destroy(err));
  return readline.createInterface({ input: text, crlfDelay: Infinity });
}

/** Imports a revision history into `store`; prints a summary line on stderr. */
export async function importRevisions(store: PageRevisionStore, file: string): Promise<void> {
  const progress = new ProgressBar(fs.statSync(file).size, process.stderr, 'revisions');
  try {
    await importLines(store, file, progress);
  } finally {
    progress.abandon(); // (after finish: nothing more)
  }
}

/** Renders of one page buffered for one `putRenders` call: at most this many, or this many bytes of lines. */
const BATCH_RENDERS = 64;
const BATCH_LINE_BYTES = 8 * 1024 * 1024;
/** Every page's buffer is sent once the buffers hold this many bytes of lines. */
const BUFFERED_LINE_BYTES = 32 * 1024 * 1024;

/** Consecutive lines of one page, to be written with one `putRenders`. */
interface PageBatch {
  renders: RenderInput[];
  lines: number[];
  bytes: number;
}

/** A write that failed at one line (its other lines before it were written). */
class LineFailure extends Error {
  constructor(
    readonly line: number,
    readonly failure: Error & { code?: string },
  ) {
    super(failure.message);
  }
}

async function importLines(store: PageRevisionStore, file: string, progress: ProgressBar): Promise<void> {
  const input = fs.createReadStream(file);
  const inFlight = new InFlight();
  const pages = new Set<string>();
  const buffered = new Map<string, PageBatch>();
  const started = Date.now();
  let imported = 0;
  let bufferedBytes = 0;
  let bytes = 0;
  let lineNo = 0;
  let badLine: Error | undefined;
  // A page's renders go in batches (few round trips: PageRevisionStore.putRenders); a bad render found
  // by the store sends the batch's renders one by one, so the lines before it are written and it is named.
  const write = async (batch: PageBatch): Promise<void> => {
    try {
      await store.putRenders(batch.renders);
      imported += batch.renders.length;
    } catch (err) {
      if (!(err instanceof InvalidArgumentError)) throw err;
      for (let i = 0; i < batch.renders.length; i++) {
        try {
          await store.putRender(batch.renders[i]);
        } catch (one) {
          throw new LineFailure(batch.lines[i], one as Error);
        }
        imported++;
      }
    }
  };
  const send = async (title: string): Promise<void> => {
    const batch = buffered.get(title)!;
    buffered.delete(title);
    bufferedBytes -= batch.bytes;
    // Renders of any pages go at once (precedence is by (rev, tid), not arrival); a repeated render
    // waits for its earlier line's batch, so that the later line wins.
    const keys = batch.renders.map((r) => `${r.rev}\u0000${r.tid}\u0000${r.title}`);
    await inFlight.add(keys, batch.lines[0], batch.lines.at(-1)!, batch.renders.length, () => write(batch));
  };
  try {
    for await (const line of linesOf(file, input)) {
      lineNo++;
      if (line.trim() === '') continue;
      const render = parseRevisionLine(line, lineNo);
      pages.add(render.title);
      const size = Buffer.byteLength(line);
      bytes += size;
      const batch = buffered.get(render.title) ?? buffered.set(render.title, { renders: [], lines: [], bytes: 0 }).get(render.title)!;
      batch.renders.push(render);
      batch.lines.push(lineNo);
      batch.bytes += size;
      bufferedBytes += size;
      if (batch.renders.length >= BATCH_RENDERS || batch.bytes >= BATCH_LINE_BYTES) await send(render.title);
      if (bufferedBytes >= BUFFERED_LINE_BYTES) for (const title of [...buffered.keys()]) if (!inFlight.failure) await send(title);
      if (inFlight.failure) break;
      progress.update(input.bytesRead, imported);
    }
  } catch (err) {
    badLine = err as Error;
  }
  // What was read before a bad line is written; after a failed write, nothing more is sent.
  for (const title of [...buffered.keys()]) if (!inFlight.failure) await send(title);
  await inFlight.drain();
  if (badLine || inFlight.failure) {
    progress.abandon();
    const summary = imported === 1 ? '1 revision was imported' : `${imported.toLocaleString('en-US')} revisions were imported`;
    if (inFlight.failure) {
      const { first, last } = inFlight.failure;
      const failure = inFlight.failure.err as Error & { code?: string };
      const err = failure instanceof LineFailure ? failure.failure : failure;
      const where = failure instanceof LineFailure ? `line ${failure.line}` : first === last ? `line ${first}` : `lines ${first}–${last}`;
      throw new Error(`${where}: ${err.message}${typeof err.code === 'string' ? ` [${err.code}]` : ''} (${summary}; the file was read no further)`);
    }
    throw new Error(`${badLine!.message} (${summary}, all from the lines before it; nothing after it)`);
  }
  progress.finish(imported);
  const seconds = (Date.now() - started) / 1000;
  process.stderr.write(`imported ${imported.toLocaleString('en-US')} revisions of ${pages.size.toLocaleString('en-US')} pages (${(bytes / 1e6).toFixed(1)} MB of lines) in ${seconds.toFixed(1)} s\n`);
}

/** One render as an export line. */
export function exportLine(r: Render): string {
  const line: Record<string, unknown> = { page: r.title, rev: r.rev, tid: r.tid, ts: Math.floor(timeOf(r.tid) / 1000) };
  if (typeof r.value === 'string') line.text = r.value;
  else line.text_b64 = Buffer.from(r.value).toString('base64');
  if (Object.keys(r.headers).length > 0) line.headers = r.headers;
  const text = Object.entries(r.parts).filter(([, v]) => typeof v === 'string');
  const bin = Object.entries(r.parts).filter(([, v]) => typeof v !== 'string');
  if (text.length > 0) line.parts = Object.fromEntries(text);
  if (bin.length > 0) line.parts_b64 = Object.fromEntries(bin.map(([k, v]) => [k, Buffer.from(v as Uint8Array).toString('base64')]));
  return JSON.stringify(line);
}

/** Writes every render of one page (or of every page) as JSON lines on stdout; a reader that goes away ends it quietly. */
export async function exportRevisions(store: PageRevisionStore, title: string | undefined): Promise<void> {
  let closed: NodeJS.ErrnoException | undefined;
  const onError = (err: NodeJS.ErrnoException) => (closed = err);
  process.stdout.on('error', onError);
  const write = async (line: string) => {
    if (process.stdout.write(line + '\n') || closed) return;
    await new Promise<void>((resolve) => {
      process.stdout.once('drain', resolve);
      process.stdout.once('error', () => resolve());
    });
  };
  try {
    const titles = title === undefined ? store.titles() : [title];
    for await (const t of titles) {
      let token: string | undefined;
      do {
        const page = await store.listRevisions(t, { limit: 100, allRenders: true, pageToken: token });
        for (const r of page.items) if (!closed) await write(exportLine(r));
        token = closed ? undefined : page.nextPageToken;
      } while (token);
      if (closed) break;
    }
  } finally {
    process.stdout.off('error', onError);
  }
  if (closed && closed.code !== 'EPIPE') throw new Error(`cannot write the export: ${closed.message}`);
}
