/**
 * `kvt pages put|get|list|import|export SCOPE/TABLE …`: page revisions and renders (DESIGN §4) through
 * PageRevisionStore, on a table whose keys and values are bytes. Output on stdout, problems on stderr
 * as one line; bad usage exits 2, a failed operation or a missing render exits 1.
 */
import * as fs from 'node:fs';
import { OptionSpec, parseCommand, ParsedOptions, UsageError } from '../server-kit/flags';
import { quietIpServernameWarning } from '../server-kit/tls';
import { KeyValueTableFactory, KvtError, PageRevisionStore, Render, RenderBody, Serializers } from '../client';
import { clientOptions, parseTablePath } from './cli';
import { openArchive, parseArchiveTarget } from './cli-archive';
import { exportRevisions, importRevisions } from './cli-pages-bulk';

const ENV_PREFIX = 'KVT';
/** Where the cluster is and how to reach it: these alone may come from the environment. */
const CONNECTION: OptionSpec[] = [
  { flag: 'controller', env: 'CONTROLLER', kind: 'string', default: '127.0.0.1:9090', description: 'controller address host:port' },
  { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: 'PEM CA file: connect over TLS, trusting this CA' },
  { flag: 'token', env: 'TOKEN', kind: 'string', description: 'bearer token (data token) — prefer the env variable' },
];
/** The archive tier of the pages (issue 32): reads fall through to it, culls and `archive` move renders into it. */
const ARCHIVE: OptionSpec[] = [
  { flag: 'archive', kind: 'string', description: 'archive tier: kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE (reads fall through to it; culled renders move into it)' },
  { flag: 'consistency', kind: 'string', default: 'LOCAL_QUORUM', description: 'Cassandra consistency of archive reads and writes (cassandra: archives)' },
  { flag: 'local-dc', kind: 'string', default: 'datacenter1', description: 'Cassandra local data center (cassandra: archives)' },
];
const JSON_FLAG: OptionSpec = { flag: 'json', kind: 'bool', default: false, description: 'print JSON (bytes as base64 in *_b64 fields)' };

interface Command {
  usage: string;
  summary: string;
  options: OptionSpec[];
  /** Number of positional arguments: [min, max]. */
  args: [number, number];
  run(positionals: string[], options: ParsedOptions, store: PageRevisionStore): Promise<number | void>;
}

const out = (line: string): void => {
  process.stdout.write(line + '\n');
};

/** Runs `fn` with a store on table "scope/table" (bytes keys and values). */
async function withStore<T>(tablePath: string, options: ParsedOptions, fn: (store: PageRevisionStore) => Promise<T>): Promise<T> {
  const { scope, table } = parseTablePath(tablePath);
  const factory = KeyValueTableFactory.withScope(scope, clientOptions(options));
  try {
    const kvt = factory.forKeyValueTable(table, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytesView });
    const archive = options.archive === undefined ? undefined : openArchive(parseArchiveTarget(String(options.archive)), options);
    try {
      return await fn(new PageRevisionStore(kvt, { archive: archive?.store }));
    } finally {
      await archive?.close();
      await kvt.close();
    }
  } finally {
    await factory.close();
  }
}

/** An integer positional argument, or bad usage naming it. */
function intArg(name: string, value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`${name} must be a non-negative integer; got "${value}"`);
  return Number(value);
}

/** A JSON object of strings from a flag, or bad usage naming it. */
function jsonObject(flag: string, value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch {
    throw new UsageError(`--${flag} must be a JSON object of strings; got ${String(value)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
    throw new UsageError(`--${flag} must be a JSON object of strings; got ${String(value)}`);
  }
  return parsed as Record<string, string>;
}

/** The bytes of a file: a string when they are valid UTF-8, else a Buffer. */
function fileBody(file: string): RenderBody {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file === '-' ? 0 : file);
  } catch (err) {
    throw new Error(`cannot read --file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes;
  }
}

/** A render as one JSON object: text bodies as strings, bytes as base64 in `value_b64` / `parts_b64`. */
export function renderJson(r: Render): Record<string, unknown> {
  const json: Record<string, unknown> = { title: r.title, rev: r.rev, tid: r.tid, headers: r.headers };
  if (typeof r.value === 'string') json.value = r.value;
  else json.value_b64 = Buffer.from(r.value).toString('base64');
  const parts = Object.entries(r.parts);
  json.parts = Object.fromEntries(parts.filter(([, v]) => typeof v === 'string'));
  const bin = parts.filter(([, v]) => typeof v !== 'string');
  if (bin.length > 0) json.parts_b64 = Object.fromEntries(bin.map(([k, v]) => [k, Buffer.from(v as Uint8Array).toString('base64')]));
  return json;
}

/** Writes a body as it is: text with a newline, bytes untouched. */
function writeBody(body: RenderBody): void {
  if (typeof body === 'string') out(body);
  else process.stdout.write(body);
}

async function getCommand([, title]: string[], o: ParsedOptions, store: PageRevisionStore): Promise<number | void> {
  if (o.tid !== undefined && o.rev === undefined) throw new UsageError('--tid needs --rev (a render is found by its revision and tid)');
  const rev = o.rev === undefined ? undefined : Number(o.rev);
  const render = rev === undefined ? await store.getLatest(title) : o.tid === undefined ? await store.getRevision(title, rev) : await store.getRender(title, rev, String(o.tid));
  const what = rev === undefined ? `page ${JSON.stringify(title)}` : `revision ${rev}${o.tid === undefined ? '' : ` render ${o.tid}`} of page ${JSON.stringify(title)}`;
  if (!render) {
    process.stderr.write(`kvt pages get: ${what} not found\n`);
    return 1;
  }
  if (o.part !== undefined) {
    const part = render.parts[String(o.part)];
    if (part === undefined) {
      process.stderr.write(`kvt pages get: ${what} has no part ${JSON.stringify(o.part)} (it has ${JSON.stringify(Object.keys(render.parts))})\n`);
      return 1;
    }
    if (o.json === true) out(JSON.stringify(typeof part === 'string' ? { part: o.part, value: part } : { part: o.part, value_b64: Buffer.from(part).toString('base64') }));
    else writeBody(part);
    return;
  }
  if (o.json === true) out(JSON.stringify(renderJson(render)));
  else writeBody(render.value);
}

async function listCommand([, title]: string[], o: ParsedOptions, store: PageRevisionStore): Promise<void> {
  const limit = o.limit === undefined ? Infinity : Number(o.limit);
  let printed = 0;
  let token: string | undefined;
  do {
    const page = await store.listRevisions(title, { limit: Math.min(Number(o['page-size']), limit - printed), allRenders: o['all-renders'] === true, pageToken: token });
    for (const r of page.items) {
      const bytes = typeof r.value === 'string' ? Buffer.byteLength(r.value) : r.value.length;
      if (o.json === true) out(JSON.stringify({ title: r.title, rev: r.rev, tid: r.tid, bytes, headers: r.headers, parts: Object.keys(r.parts) }));
      else out(`${r.rev}\t${r.tid}\t${bytes}`);
      printed++;
    }
    token = page.nextPageToken;
  } while (token && printed < limit);
}

/** The page commands by name; README.md mentions each option. */
export const PAGE_COMMANDS: Record<string, Command> = {
  put: {
    usage: 'kvt pages put SCOPE/TABLE TITLE REV (VALUE | --file F) [--tid T] [--headers JSON] [--parts JSON] [--if-absent]',
    summary: 'Stores a render of revision REV of page TITLE; prints its tid (a new time-based UUID unless --tid).',
    options: [
      ...CONNECTION,
      ...ARCHIVE,
      { flag: 'file', kind: 'string', description: 'read the value from this file ("-": stdin); text when it is UTF-8, else bytes' },
      { flag: 'tid', kind: 'string', description: 'the render id: a time-based (v1) UUID' },
      { flag: 'headers', kind: 'string', description: 'headers as a JSON object of strings, e.g. {"content-type":"text/html"}' },
      { flag: 'parts', kind: 'string', description: 'named parts as a JSON object of strings, e.g. {"data-parsoid":"{}"}' },
      { flag: 'if-absent', kind: 'bool', default: false, description: 'only if no render with this rev and tid exists (else exit 1, [BAD_KEY_VERSION])' },
    ],
    args: [3, 4],
    async run([, title, rev, value], o, store) {
      if ((value === undefined) === (o.file === undefined)) throw new UsageError('give the value as an argument or with --file, not both');
      const body = value ?? fileBody(String(o.file));
      const put = { title, rev: intArg('REV', rev), tid: o.tid as string | undefined, value: body, headers: jsonObject('headers', o.headers), parts: jsonObject('parts', o.parts) };
      out((await store.putRender(put, { ifAbsent: o['if-absent'] === true })).tid);
    },
  },
  get: {
    usage: 'kvt pages get SCOPE/TABLE TITLE [--rev N [--tid T]] [--part NAME] [--json]',
    summary: "Prints a render's value (or one part): the latest of the page, of --rev N, or exactly --rev N --tid T (exit 1 when missing).",
    options: [
      ...CONNECTION,
      ...ARCHIVE,
      { flag: 'rev', kind: 'int', min: 0, description: 'the revision (default: the latest)' },
      { flag: 'tid', kind: 'string', description: 'exactly this render of --rev' },
      { flag: 'part', kind: 'string', description: 'print this part instead of the value' },
      JSON_FLAG,
    ],
    args: [2, 2],
    run: getCommand,
  },
  list: {
    usage: 'kvt pages list SCOPE/TABLE TITLE [--limit N] [--page-size N] [--all-renders] [--json]',
    summary: 'Lists the revisions of a page, newest first, one "REV<TAB>TID<TAB>BYTES" a line (paging through them all).',
    options: [
      ...CONNECTION,
      ...ARCHIVE,
      { flag: 'limit', kind: 'int', min: 1, description: 'at most this many lines' },
      { flag: 'page-size', kind: 'int', min: 1, max: 1000, default: 100, description: 'revisions read per request' },
      { flag: 'all-renders', kind: 'bool', default: false, description: 'every render of every revision, not only the latest of each' },
      JSON_FLAG,
    ],
    args: [2, 2],
    run: listCommand,
  },
  import: {
    usage: 'kvt pages import SCOPE/TABLE FILE.jsonl[.gz]',
    summary: [
      'Loads a revision history: JSON lines {"page", "rev", "ts", "text"} (the format of shared/data; gzip or not),',
      'optionally "tid", "headers", "parts" (and "text_b64" / "parts_b64" for bytes); other fields are ignored.',
      'page is the title, rev the revision, text the value; without "tid", the tid is derived from "ts" (Unix',
      'seconds) deterministically, so importing the same file again writes the same renders (idempotent).',
      'Progress bar on a terminal, a summary line at the end; a bad line stops the import with its line number,',
      'and no render is ever left half written.',
    ].join('\n'),
    options: [...CONNECTION, ...ARCHIVE],
    args: [2, 2],
    run: ([, file], _o, store) => importRevisions(store, file),
  },
  export: {
    usage: 'kvt pages export SCOPE/TABLE [--title T]',
    summary: 'Writes every render (of one page, or of all) as JSON lines {"page", "rev", "tid", "ts", "text", …}; they import back byte for byte.',
    options: [...CONNECTION, ...ARCHIVE, { flag: 'title', kind: 'string', description: 'only this page' }],
    args: [1, 1],
    run: (_a, o, store) => exportRevisions(store, o.title === undefined ? undefined : String(o.title)),
  },
  archive: {
    usage: 'kvt pages archive SCOPE/TABLE [TITLE] --archive (kvt:SCOPE/TABLE | cassandra:HOST:PORT/KEYSPACE)',
    summary: "Moves a page's history (or every page's) to the archive: every render but the latest is archived, then removed from the hot table; `get` reads it from the archive.",
    options: [...CONNECTION, ...ARCHIVE],
    args: [1, 2],
    async run([, title], o, store) {
      if (o.archive === undefined) throw new UsageError('kvt pages archive needs --archive kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE');
      const moved = await store.archiveHistory(title);
      out(`archived ${moved.moved.toLocaleString('en-US')} renders of ${moved.pages.toLocaleString('en-US')} page(s)${moved.skipped > 0 ? `; ${moved.skipped} changed meanwhile and stay hot` : ''}`);
    },
  },
};

function usage(): string {
  const lines = ['Usage: kvt pages <put | get | list | import | export | archive> SCOPE/TABLE …', ''];
  for (const c of Object.values(PAGE_COMMANDS)) lines.push(`  ${c.usage}`, `      ${c.summary.split('\n')[0]}`);
  return lines.join('\n');
}

/** Entry point of `kvt pages`: argv starts with the subcommand. */
export async function main(argv: string[]): Promise<void> {
  quietIpServernameWarning();
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : PAGE_COMMANDS[name];
  if (!command) {
    if (name === undefined || name === '--help' || name === '-h') {
      process.stdout.write(usage() + '\n');
      if (name === undefined) process.exitCode = 2;
      return;
    }
    process.stderr.write(`kvt pages: unknown command "${name}" (see kvt pages --help)\n`);
    process.exitCode = 2;
    return;
  }
  try {
    const parsed = parseCommand(command, rest, process.env, ENV_PREFIX);
    if (parsed.help !== undefined) {
      process.stdout.write(parsed.help + '\n');
      return;
    }
    const { options, positionals } = parsed;
    const code = await withStore(positionals[0], options, (store) => command.run(positionals, options, store));
    process.exitCode = code ?? 0;
  } catch (err) {
    const code = err instanceof KvtError ? ` [${err.code}]` : '';
    process.stderr.write(`kvt pages ${name}: ${(err as Error).message}${code}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}
