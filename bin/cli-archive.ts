/**
 * `kvt archive stats|get|append TARGET …`: the archive tier (DESIGN §4) from the command line, on a
 * kvt table (`kvt:SCOPE/TABLE`, with --controller) or on Cassandra (`cassandra:HOST:PORT/KEYSPACE`).
 * Output goes to stdout, problems to stderr as one line; bad usage exits 2, a failed operation or a
 * render not archived exits 1.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { OptionSpec, parseCommand, ParsedOptions, UsageError } from '../server-kit/flags';
import { ArchivedRender, ArchiveStore, ArchiveStoreOptions, CassandraArchiveStore, KeyValueTableFactory, KvtArchiveStore, KvtError, Serializers } from '../client';
import { base64Bytes } from './cli-bulk';

const ENV_PREFIX = 'KVT';

/** Where an archive lives: a kvt table or a Cassandra keyspace. */
export type ArchiveTarget = { kind: 'kvt'; scope: string; table: string } | { kind: 'cassandra'; host: string; port: number; keyspace: string };

/**
 * Parses `kvt:SCOPE/TABLE` or `cassandra:HOST:PORT/KEYSPACE` (HOST may be `[ipv6]`; PORT defaults to 9042).
 * @throws UsageError naming the form expected
 */
export function parseArchiveTarget(value: string): ArchiveTarget {
  const kvt = /^kvt:([^/]+)\/([^/]+)$/.exec(value);
  if (kvt) return { kind: 'kvt', scope: kvt[1], table: kvt[2] };
  const cassandra = /^cassandra:(\[[^\]]+\]|[^:/[\]]+)(?::(\d{1,5}))?\/([A-Za-z0-9_]{1,48})$/.exec(value);
  if (cassandra) {
    const port = cassandra[2] === undefined ? 9042 : Number(cassandra[2]);
    if (port < 1 || port > 65535) throw new UsageError(`archive port is ${port}; it must be from 1 to 65535`);
    return { kind: 'cassandra', host: cassandra[1].replace(/^\[|\]$/g, ''), port, keyspace: cassandra[3] };
  }
  throw new UsageError(`archive must be written kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE; got "${value}"`);
}

const CONNECTION: OptionSpec[] = [
  { flag: 'controller', env: 'CONTROLLER', kind: 'string', default: '127.0.0.1:9090', description: 'controller address host:port (kvt: archives)' },
  { flag: 'token', env: 'TOKEN', kind: 'string', description: 'bearer token (kvt: archives) — prefer the env variable' },
  { flag: 'consistency', kind: 'string', description: 'Cassandra consistency of reads and writes (cassandra: archives)', default: 'LOCAL_QUORUM' },
  { flag: 'local-dc', kind: 'string', description: 'Cassandra local data center (cassandra: archives)', default: 'datacenter1' },
];
const LAYOUT: OptionSpec[] = [
  { flag: 'block-revisions', kind: 'int', min: 1, max: 1000, description: 'renders per block', default: 128 },
  { flag: 'block-bytes', kind: 'int', min: 1024, max: 8 * 1024 * 1024, description: 'raw bytes per block', default: 4 * 1024 * 1024 },
];

/** Opens the archive at `target` with the command's options; the returned close also closes what it opened. */
export function openArchive(target: ArchiveTarget, options: ParsedOptions, archive: ArchiveStoreOptions = {}): { store: ArchiveStore; close(): Promise<void> } {
  if (target.kind === 'cassandra') {
    const host = target.host.includes(':') ? `[${target.host}]` : target.host;
    const store = new CassandraArchiveStore({
      contactPoints: [`${host}:${target.port}`],
      keyspace: target.keyspace,
      localDataCenter: String(options['local-dc'] ?? 'datacenter1'),
      consistency: String(options.consistency ?? 'LOCAL_QUORUM') as 'LOCAL_QUORUM',
      ...archive,
    });
    return { store, close: () => store.close() };
  }
  const factory = KeyValueTableFactory.withScope(target.scope, { controller: String(options.controller), ...(options.token ? { token: String(options.token) } : {}) });
  const table = factory.forKeyValueTable(target.table, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes });
  const store = new KvtArchiveStore(table, archive);
  return {
    store,
    close: async () => {
      try {
        await store.close();
      } finally {
        await table.close();
        await factory.close();
      }
    },
  };
}

async function withArchive<T>(positionals: string[], options: ParsedOptions, archive: ArchiveStoreOptions, fn: (store: ArchiveStore) => Promise<T>): Promise<T> {
  const { store, close } = openArchive(parseArchiveTarget(positionals[0]), options, archive);
  try {
    return await fn(store);
  } finally {
    await close();
  }
}

const fmt = (n: number): string => n.toLocaleString('en-US');

async function runStats(positionals: string[], options: ParsedOptions): Promise<void> {
  const stats = await withArchive(positionals, options, { flushOnClose: false }, (s) => s.stats(positionals[1]));
  if (options.json) {
    process.stdout.write(JSON.stringify(stats) + '\n');
    return;
  }
  const pct = stats.rawBytes === 0 ? 0 : (100 * stats.storedBytes) / stats.rawBytes;
  process.stdout.write(
    [
      `pages              ${fmt(stats.pages)}`,
      `revisions          ${fmt(stats.revisions)}`,
      `raw bytes          ${fmt(stats.rawBytes)}`,
      `stored bytes       ${fmt(stats.storedBytes)} (${pct.toFixed(2)}% of raw)`,
      `blocks             ${fmt(stats.blocks)} (${fmt(stats.sealedBlocks)} sealed)`,
      `pending revisions  ${fmt(stats.pendingRevisions)}`,
    ].join('\n') + '\n',
  );
}

function parseRev(value: string): number {
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`REV must be a non-negative integer; got "${value}"`);
  return Number(value);
}

async function runGet(positionals: string[], options: ParsedOptions): Promise<number> {
  const [, title, revText, tid] = positionals;
  const rev = parseRev(revText);
  return withArchive(positionals, options, { flushOnClose: false }, async (store) => {
    const render = await store.get(title, rev, tid);
    if (!render) {
      process.stderr.write(`kvt archive get: ${JSON.stringify(title)} rev ${rev}${tid ? ` tid ${tid}` : ''} is not archived\n`);
      return 1;
    }
    if (options.json) {
      const location = await store.locate(title, rev, render.tid);
      const body = (v: string | Uint8Array) => (typeof v === 'string' ? v : { base64: Buffer.from(v).toString('base64') });
      const parts = Object.fromEntries(Object.entries(render.parts).map(([k, v]) => [k, body(v)]));
      process.stdout.write(
        JSON.stringify({ title, rev: render.rev, tid: render.tid, headers: render.headers, value: body(render.value), parts, block: location?.block, sealed: location?.sealed }) + '\n',
      );
    } else process.stdout.write(typeof render.value === 'string' ? render.value : Buffer.from(render.value));
    return 0;
  });
}

/** One line of an append file as a render: `{title, rev, tid, value | value_b64, headers?, parts?}`. */
function renderOf(line: string, lineNo: number): ArchivedRender {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line);
  } catch {
    throw new UsageError(`line ${lineNo}: not JSON`);
  }
  let value = o.value;
  if (o.value_b64 !== undefined) {
    const bytes = base64Bytes(o.value_b64);
    if (bytes === undefined) throw new UsageError(`line ${lineNo}: "value_b64" must be a base64 string`);
    value = new Uint8Array(bytes);
  }
  return { title: o.title, rev: o.rev, tid: o.tid, value, headers: o.headers, parts: o.parts } as ArchivedRender;
}

async function runAppend(positionals: string[], options: ParsedOptions): Promise<void> {
  const batch = Number(options.batch);
  const archive = { blockRevisions: Number(options['block-revisions']), blockBytes: Number(options['block-bytes']) };
  const input = positionals[1] === '-' ? process.stdin : fs.createReadStream(positionals[1]);
  await withArchive(positionals, options, archive, async (store) => {
    let pending: ArchivedRender[] = [];
    let lineNo = 0;
    const flush = async () => {
      const result = await store.append(pending);
      // One line per acknowledged append: every render of lines up to `through` is durable.
      process.stdout.write(JSON.stringify({ ...result, through: lineNo }) + '\n');
      pending = [];
    };
    for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) {
      lineNo++;
      if (line.trim() === '') continue;
      pending.push(renderOf(line, lineNo));
      if (pending.length >= batch) await flush();
    }
    if (pending.length) await flush();
  });
}

interface Command {
  usage: string;
  summary: string;
  options: OptionSpec[];
  args: [number, number];
  run(positionals: string[], options: ParsedOptions): Promise<number | void>;
}

const JSON_FLAG: OptionSpec = { flag: 'json', kind: 'bool', description: 'print JSON' };
const COMMANDS: Record<string, Command> = {
  stats: {
    usage: 'kvt archive stats ARCHIVE [TITLE] [--json]',
    summary: 'Pages, revisions, raw and stored bytes, blocks of the archive (or of one page). ARCHIVE: kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE.',
    options: [...CONNECTION, JSON_FLAG],
    args: [1, 2],
    run: runStats,
  },
  get: {
    usage: 'kvt archive get ARCHIVE TITLE REV [TID] [--json]',
    summary: 'Prints an archived render (the latest of REV without TID); --json adds headers, parts, tid and its block.',
    options: [...CONNECTION, JSON_FLAG],
    args: [3, 4],
    run: runGet,
  },
  append: {
    usage: 'kvt archive append ARCHIVE FILE.jsonl|- [--batch N]',
    summary:
      'Archives renders, one JSON object a line: {"title", "rev", "tid", "value" | "value_b64", "headers"?, "parts"?}. Prints {"appended", "alreadyArchived", "through"} after each acknowledged batch.',
    options: [...CONNECTION, ...LAYOUT, { flag: 'batch', kind: 'int', min: 1, max: 10_000, description: 'renders per append', default: 64 }],
    args: [2, 2],
    run: runAppend,
  },
};

/** Entry point of `kvt archive …`. */
export async function main(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const command = sub === undefined ? undefined : COMMANDS[sub];
  if (!command) {
    const out = sub === undefined || sub === '--help' || sub === '-h' ? process.stdout : process.stderr;
    if (out === process.stderr) out.write(`kvt archive: unknown command "${sub}"\n`);
    out.write(`Usage: kvt archive <stats | get | append> …\n\n`);
    for (const c of Object.values(COMMANDS)) out.write(`  ${c.usage.padEnd(52)} ${c.summary.split('. ')[0]}\n`);
    if (out === process.stderr || sub === undefined) process.exitCode = 2;
    return;
  }
  try {
    const parsed = parseCommand(command, rest, process.env, ENV_PREFIX);
    if (parsed.help !== undefined) {
      process.stdout.write(parsed.help + '\n');
      return;
    }
    const { options, positionals } = parsed;
    process.exitCode = (await command.run(positionals, options)) ?? 0;
  } catch (err) {
    const code = err instanceof KvtError ? ` [${err.code}]` : '';
    process.stderr.write(`kvt archive ${sub}: ${(err as Error).message}${code}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}
