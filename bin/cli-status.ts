/**
 * `kvt status [--json]`: the whole cluster at a glance, as `etcdctl endpoint status` or `nodetool
 * status` would show it: every segment store (live or dead, address, segments, entries) and every
 * table's partitions with their stores. It exits 1 when some table has a partition on a dead store
 * (its calls fail until the store returns), so a script or a probe can act on it.
 *
 * `kvt health ADDRESS`: asks one process for its `grpc.health.v1` status (what the compose file's
 * healthchecks run); exits 0 only when it is SERVING.
 *
 * Built on the public client API and the health client only; output on stdout, problems on stderr as
 * one line; bad usage exits 2.
 */
import * as fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { KeyValueTableDescription, KeyValueTableManager, KvtError, SegmentStoreDescription } from '../client';
import { helpText, OptionSpec, parseOptions, ParsedOptions, UsageError } from '../server-kit/flags';
import { checkHealth } from '../server-kit/health';
import { quietIpServernameWarning } from '../server-kit/tls';
import { formatAge } from './cli-store';

const ENV_PREFIX = 'KVT';
const TLS_CA: OptionSpec = { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: 'PEM CA file: connect over TLS, trusting this CA' };

const STATUS_OPTIONS: OptionSpec[] = [
  { flag: 'controller', env: 'CONTROLLER', kind: 'string', default: '127.0.0.1:9090', description: 'controller address host:port' },
  TLS_CA,
  { flag: 'token', env: 'TOKEN', kind: 'string', description: 'bearer token (the data token is enough) — prefer the env variable' },
  { flag: 'json', kind: 'bool', default: false, description: 'print the status as one JSON object' },
  { flag: 'quick', kind: 'bool', default: false, description: 'do not count entries (otherwise every live store reads its segments)' },
];

const HEALTH_OPTIONS: OptionSpec[] = [
  TLS_CA,
  { flag: 'service', kind: 'string', description: 'the service to ask about, e.g. kvt.v1.SegmentStore (default: the process as a whole)' },
  { flag: 'timeout-ms', kind: 'int', default: 5000, min: 1, max: 600_000, description: 'deadline of the check' },
];

/** One store in `kvt status --json`. */
export interface StoreStatusLine {
  id: string;
  address: string;
  live: boolean;
  lastHeartbeatAgeMs: number;
  segments: number;
  /** Live entries of its segments (absent with --quick, or when the store could not count them). */
  entries?: number;
}

/** What `kvt status --json` prints. */
export interface ClusterStatusReport {
  /** False when some table has a partition on a dead store. */
  healthy: boolean;
  stores: StoreStatusLine[];
  tables: Array<
    Omit<KeyValueTableDescription, 'createdAt' | 'partitions'> & {
      createdAt: string;
      partitions: Array<{ partition: number; segment: string; store: { id: string; address: string; live: boolean }; entries?: number }>;
    }
  >;
  /** One line per table with partitions on dead stores. */
  problems: string[];
}

function readCa(options: ParsedOptions): Buffer | undefined {
  if (options['tls-ca'] === undefined) return undefined;
  const file = String(options['tls-ca']);
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read --tls-ca ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Every table of every scope, described (with each partition's entries unless `quick`). */
async function describeAll(manager: KeyValueTableManager, quick: boolean): Promise<KeyValueTableDescription[]> {
  const tables: KeyValueTableDescription[] = [];
  for await (const scope of manager.listScopes()) {
    for await (const t of manager.listKeyValueTables(scope)) tables.push(await manager.describeKeyValueTable(t.scope, t.name, { contents: !quick }));
  }
  return tables;
}

/** The report of `stores` and `tables`: entries per store summed from its partitions, and the tables with partitions on dead stores. */
export function statusReport(stores: readonly SegmentStoreDescription[], tables: readonly KeyValueTableDescription[], quick: boolean): ClusterStatusReport {
  const entries = new Map<string, number>();
  const counted = new Set<string>();
  const problems: string[] = [];
  const tableLines = tables.map((t) => {
    const dead = t.partitions.filter((p) => !p.store.live).map((p) => p.partition);
    if (dead.length > 0) problems.push(`${t.scope}/${t.name} has ${dead.length} partition${dead.length === 1 ? '' : 's'} on dead stores (${dead.join(', ')})`);
    const partitions = t.partitions.map((p) => {
      const n = p.contents && 'entries' in p.contents ? p.contents.entries : undefined;
      if (n !== undefined) {
        entries.set(p.store.id, (entries.get(p.store.id) ?? 0) + n);
        counted.add(p.store.id);
      }
      return { partition: p.partition, segment: p.segment, store: p.store, ...(n === undefined ? {} : { entries: n }) };
    });
    return { scope: t.scope, name: t.name, state: t.state, partitionCount: t.partitionCount, createdAt: t.createdAt.toISOString(), partitions };
  });
  const storeLines = stores.map((s) => ({
    id: s.id,
    address: s.address,
    live: s.live,
    lastHeartbeatAgeMs: s.lastHeartbeatAgeMs,
    segments: s.segmentCount,
    // A live store that holds no segment holds no entries.
    ...(quick || !s.live ? {} : { entries: counted.has(s.id) || s.segmentCount === 0 ? (entries.get(s.id) ?? 0) : undefined }),
  }));
  return { healthy: problems.length === 0, stores: storeLines, tables: tableLines, problems };
}

/** Rows of cells as lines, each column as wide as its widest cell, two spaces apart. */
function columns(rows: readonly string[][], indent = ''): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map(
    (r) =>
      indent +
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c])))
        .join('  ')
        .trimEnd(),
  );
}

const count = (n: number | undefined): string => (n === undefined ? '-' : String(n));

/** The lines of `kvt status`: a verdict, the stores, then each table with its partitions. */
export function formatStatus(r: ClusterStatusReport): string[] {
  const dead = r.stores.filter((s) => !s.live).length;
  const verdict = r.healthy ? 'healthy' : 'degraded';
  const lines = [`cluster: ${verdict} (${r.stores.length - dead} live and ${dead} dead segment stores, ${r.tables.length} tables)`];
  lines.push(
    '',
    ...columns([
      ['STORE', 'ADDRESS', 'STATE', 'LAST HEARTBEAT', 'SEGMENTS', 'ENTRIES'],
      ...r.stores.map((s) => [s.id, s.address, s.live ? 'live' : 'dead', formatAge(s.lastHeartbeatAgeMs), String(s.segments), count(s.entries)]),
    ]),
  );
  for (const t of r.tables) {
    lines.push('', `${t.scope}/${t.name}: ${t.state}, ${t.partitionCount} partition${t.partitionCount === 1 ? '' : 's'}`);
    const rows = t.partitions.map((p) => [String(p.partition), p.segment, p.store.id, p.store.address, p.store.live ? 'live' : 'dead', count(p.entries)]);
    lines.push(...columns([['PARTITION', 'SEGMENT', 'STORE', 'ADDRESS', 'STATE', 'ENTRIES'], ...rows], '  '));
  }
  return lines;
}

async function status(options: ParsedOptions): Promise<number> {
  const ca = readCa(options);
  const manager = new KeyValueTableManager({
    controller: String(options.controller),
    ...(ca ? { tls: { ca } } : {}),
    ...(options.token === undefined ? {} : { token: String(options.token) }),
  });
  try {
    const quick = options.quick === true;
    const stores = await manager.listSegmentStores();
    const report = statusReport(stores, await describeAll(manager, quick), quick);
    if (options.json === true) process.stdout.write(JSON.stringify(report) + '\n');
    else process.stdout.write(formatStatus(report).join('\n') + '\n');
    for (const problem of report.problems) process.stderr.write(`kvt status: ${problem}\n`);
    return report.healthy ? 0 : 1;
  } finally {
    await manager.close();
  }
}

async function health(address: string, options: ParsedOptions): Promise<number> {
  const ca = readCa(options);
  const credentials = ca ? grpc.credentials.createSsl(ca) : grpc.credentials.createInsecure();
  const answer = await checkHealth(address, { credentials, service: options.service === undefined ? '' : String(options.service), timeoutMs: Number(options['timeout-ms']) }).catch(
    (err: grpc.ServiceError) => {
      throw new Error(`${address} did not answer the health check: ${err.details || err.message}`);
    },
  );
  process.stdout.write(answer + '\n');
  return answer === 'SERVING' ? 0 : 1;
}

const COMMANDS = {
  status: {
    usage: 'kvt status [--json] [--quick]',
    summary: 'Prints every segment store and every table with its partitions; exits 1 when a table has a partition on a dead store.',
    options: STATUS_OPTIONS,
    args: 0,
  },
  health: { usage: 'kvt health HOST:PORT [--service NAME]', summary: 'Asks a kvt process for its grpc.health.v1 status; exits 0 only when it is SERVING.', options: HEALTH_OPTIONS, args: 1 },
} as const;

/** Entry point of `kvt status` and `kvt health`: argv starts with the command name. */
export async function main(argv: string[]): Promise<void> {
  quietIpServernameWarning();
  const name = argv[0] as keyof typeof COMMANDS;
  const command = COMMANDS[name];
  try {
    const { options, help, positionals } = parseOptions(command.options, argv.slice(1), process.env, ENV_PREFIX);
    if (help) {
      process.stdout.write(helpText(command.usage, command.summary, command.options, ENV_PREFIX) + '\n');
      return;
    }
    if (positionals.length !== command.args) throw new UsageError(`expected ${command.args} argument(s), got ${positionals.length}; usage: ${command.usage}`);
    process.exitCode = name === 'status' ? await status(options) : await health(positionals[0], options);
  } catch (err) {
    const code = err instanceof KvtError ? ` [${err.code}]` : '';
    process.stderr.write(`kvt ${name}: ${(err as Error).message}${code}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}
