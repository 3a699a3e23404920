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
 * Import checks each line whole before sending it, keeps up to 32 renders in flight (a repeated
 * render waits for its earlier line, so the later line wins), and draws a progress bar on a
 * terminal. Precedence is by (rev, tid), so the order they land in does not matter. Every render is one
 * atomic write, so a stopped import never leaves part of a render: at the first bad line or failed
 * write it stops reading, waits for what it sent, and says which line and how much was imported.
 * Export writes the same lines (with `tid`), newest first per page; they import back byte for byte.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { Readable, Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import { MAX_KEY_FAMILY_LENGTH, PageRevisionStore, Render, RenderBody, RenderInput, timeOf, timeUuidOf } from '../client';
import { InFlight, ProgressBar } from './cli-bulk';

/** Clock sequence and node of the tids an import derives from `ts` ("kvtimp"; its multicast bit is set). */
const IMPORT_CLOCK_SEQUENCE = 0;
const IMPORT_NODE = Buffer.from('kvtimp', 'latin1');

/** The tid an import gives a line without one: the v1 UUID of its `ts` (seconds), always the same. */
export function importTid(ts: number): string {
  return timeUuidOf(Math.round(ts * 1000), IMPORT_CLOCK_SEQUENCE, IMPORT_NODE);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function fail(lineNo: number, message: string): never {
  throw new Error(`line ${lineNo}: ${message}`);
}

function body(record: Record<string, unknown>, field: string, lineNo: number): RenderBody {
  const b64 = record[`${field}_b64`];
  if (b64 !== undefined) {
    if (record[field] !== undefined) fail(lineNo, `give "${field}" or "${field}_b64", not both`);
    if (typeof b64 !== 'string' || !BASE64.test(b64) || b64.length % 4 !== 0) fail(lineNo, `"${field}_b64" must be a base64 string`);
    return Buffer.from(b64, 'base64');
  }
  const text = record[field];
  if (typeof text !== 'string') fail(lineNo, text === undefined ? `"${field}" is missing` : `"${field}" must be a string`);
  return text;
}

function parts(record: Record<string, unknown>, lineNo: number): Record<string, RenderBody> | undefined {
  const out: Record<string, RenderBody> = {};
  for (const [field, decode] of [
    ['parts', (v: string) => v],
    ['parts_b64', (v: string) => Buffer.from(v, 'base64')],
  ] as const) {
    const given = record[field];
    if (given === undefined) continue;
    if (typeof given !== 'object' || given === null || Array.isArray(given)) fail(lineNo, `"${field}" must be an object of strings`);
    for (const [name, v] of Object.entries(given)) {
      if (typeof v !== 'string') fail(lineNo, `"${field}.${name}" must be a string`);
      out[name] = decode(v);
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

async function importLines(store: PageRevisionStore, file: string, progress: ProgressBar): Promise<void> {
  const input = fs.createReadStream(file);
  const inFlight = new InFlight();
  const pages = new Set<string>();
  const started = Date.now();
  let bytes = 0;
  let lineNo = 0;
  let badLine: Error | undefined;
  try {
    for await (const line of linesOf(file, input)) {
      lineNo++;
      if (line.trim() === '') continue;
      const render = parseRevisionLine(line, lineNo);
      pages.add(render.title);
      bytes += Buffer.byteLength(line);
      // Renders of any pages go at once (precedence is by (rev, tid), not arrival); a repeated render
      // waits for its earlier line, so that the later line wins.
      await inFlight.add([`${render.rev}\u0000${render.tid}\u0000${render.title}`], lineNo, lineNo, 1, () => store.putRender(render));
      if (inFlight.failure) break;
      progress.update(input.bytesRead, inFlight.written);
    }
  } catch (err) {
    badLine = err as Error;
  }
  await inFlight.drain();
  if (badLine || inFlight.failure) {
    progress.abandon();
    const n = inFlight.written;
    const imported = n === 1 ? '1 revision was imported' : `${n.toLocaleString('en-US')} revisions were imported`;
    if (inFlight.failure) {
      const err = inFlight.failure.err as Error & { code?: string };
      throw new Error(`line ${inFlight.failure.first}: ${err.message}${typeof err.code === 'string' ? ` [${err.code}]` : ''} (${imported}; the file was read no further)`);
    }
    throw new Error(`${badLine!.message} (${imported}, all from the lines before it; nothing after it)`);
  }
  progress.finish(inFlight.written);
  const seconds = (Date.now() - started) / 1000;
  process.stderr.write(
    `imported ${inFlight.written.toLocaleString('en-US')} revisions of ${pages.size.toLocaleString('en-US')} pages (${(bytes / 1e6).toFixed(1)} MB of lines) in ${seconds.toFixed(1)} s\n`,
  );
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
