/**
 * The client commands of `kvt` (scope, table, store, put, get, remove, keys, import, export), built on the public
 * client API only. Keys and values are UTF-8 strings. Output goes to stdout, problems to stderr as one
 * line; bad usage exits 2, a failed operation or a missing key exits 1.
 */
import * as fs from 'node:fs';
import { OptionSpec, parseCommand, ParsedOptions, UsageError } from '../server-kit/flags';
import { quietIpServernameWarning } from '../server-kit/tls';
import { KeyValueTable, KeyValueTableFactory, KeyValueTableManager, KvtError, partitionOf, Serializer, Serializers, Version } from '../client';
import { MAX_PARTITION_COUNT, MIN_PARTITION_COUNT } from '../proto/limits';
import { exportTable, importFile } from './cli-bulk';
import { formatRemoval, formatStoreList, formatTableDescription } from './cli-store';

const ENV_PREFIX = 'KVT';
const CONTROLLER: OptionSpec = {
  flag: 'controller',
  env: 'CONTROLLER',
  kind: 'string',
  default: '127.0.0.1:9090',
  description: 'controller address host:port',
};
/**
 * Every command talks to the cluster: where, over TLS or not, with which token; these alone may come
 * from the environment. A command's own options (--family, --limit, …) have no variable: a KVT_FAMILY
 * left in the shell would quietly narrow an export or put keys into a family.
 */
const CONNECTION: OptionSpec[] = [
  CONTROLLER,
  { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: 'PEM CA file: connect over TLS, trusting this CA' },
  { flag: 'token', env: 'TOKEN', kind: 'string', description: 'bearer token (data token; admin token to create/delete/remove) — prefer the env variable' },
];
const FAMILY: OptionSpec = { flag: 'family', kind: 'string', description: 'key family' };

interface Command {
  usage: string;
  summary: string;
  options: OptionSpec[];
  /** Number of positional arguments: [min, max]. */
  args: [number, number];
  run(positionals: string[], options: ParsedOptions): Promise<number | void>;
}

/** Splits "scope/table" into its parts, or throws a UsageError naming the argument. */
export function parseTablePath(value: string): { scope: string; table: string } {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1 || value.indexOf('/', slash + 1) >= 0) {
    throw new UsageError(`table must be written SCOPE/TABLE; got "${value}"`);
  }
  return { scope: value.slice(0, slash), table: value.slice(slash + 1) };
}

/** Client options from the connection flags; reads the CA file. */
export function clientOptions(options: ParsedOptions): { controller: string; tls?: { ca: Buffer }; token?: string } {
  const out: { controller: string; tls?: { ca: Buffer }; token?: string } = { controller: String(options.controller) };
  if (options['tls-ca'] !== undefined) {
    const file = String(options['tls-ca']);
    try {
      out.tls = { ca: fs.readFileSync(file) };
    } catch (err) {
      throw new Error(`cannot read --tls-ca ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (options.token !== undefined) out.token = String(options.token);
  return out;
}

async function withManager<T>(options: ParsedOptions, fn: (m: KeyValueTableManager) => Promise<T>): Promise<T> {
  const manager = new KeyValueTableManager(clientOptions(options));
  try {
    return await fn(manager);
  } finally {
    await manager.close();
  }
}

/** Keys and values as text (put, get, keys) or as bytes (import and export, which carry any bytes). */
const TEXT = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };
const BYTES = { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes };
/** put and get: text keys, values as bytes (a value from a file or stdin may be any bytes). */
const TEXT_KEYS_BYTE_VALUES = { keySerializer: Serializers.utf8, valueSerializer: Serializers.bytes };

/** The bytes of a value file ("-": stdin); a file that cannot be read is a failed operation naming it. */
function readValueFile(file: string): Buffer {
  try {
    return fs.readFileSync(file === '-' ? 0 : file);
  } catch (err) {
    throw new Error(`cannot read the value from ${file === '-' ? 'stdin' : file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Writes a value to `file`, naming it when that fails. */
function writeValueFile(file: string, value: Buffer): void {
  try {
    fs.writeFileSync(file, value);
  } catch (err) {
    throw new Error(`cannot write the value to ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Runs `fn` with a handle on table "scope/table" with these serializers. */
async function withTable<K, V, T>(
  tablePath: string,
  options: ParsedOptions,
  serializers: { keySerializer: Serializer<K>; valueSerializer: Serializer<V> },
  fn: (table: KeyValueTable<K, V>) => Promise<T>,
): Promise<T> {
  const { scope, table } = parseTablePath(tablePath);
  const factory = KeyValueTableFactory.withScope(scope, clientOptions(options));
  try {
    const kvt = factory.forKeyValueTable(table, serializers);
    try {
      return await fn(kvt);
    } finally {
      await kvt.close();
    }
  } finally {
    await factory.close();
  }
}

const out = (line: string): void => {
  process.stdout.write(line + '\n');
};
const family = (options: ParsedOptions) => (options.family === undefined ? null : String(options.family));

const IF_VERSION: OptionSpec = { flag: 'if-version', kind: 'string', description: 'only while the key is at this version (as put prints it)' };

/** The version of --if-version, or undefined; a malformed one is bad usage. */
function ifVersion(options: ParsedOptions): Version | undefined {
  if (options['if-version'] === undefined) return undefined;
  try {
    return Version.fromString(String(options['if-version']));
  } catch (err) {
    throw new UsageError(`--if-version: ${(err as Error).message}`);
  }
}

/** The prefix of `kvt remove --prefix P` ("" for --all), or undefined for a single key; checks the usage. */
function rangeOf(options: ParsedOptions, key: string | undefined): string | undefined {
  if (options.prefix === undefined && options.all !== true) return undefined;
  const flag = options.prefix === undefined ? '--all' : '--prefix';
  if (options.prefix !== undefined && options.all === true) throw new UsageError('--prefix and --all exclude each other');
  if (options.family === undefined) throw new UsageError(`${flag} needs --family F (a range removal stays within one key family)`);
  if (key !== undefined || options['if-version'] !== undefined) throw new UsageError(`${flag} removes a range: give no KEY and no --if-version`);
  return options.prefix === undefined ? '' : String(options.prefix);
}

/** The client commands by name ("scope create", "put", …); README.md mentions each option. */
export const COMMANDS: Record<string, Command> = {
  'scope create': {
    usage: 'kvt scope create SCOPE',
    summary: 'Creates a scope (prints "created" or "exists").',
    options: CONNECTION,
    args: [1, 1],
    run: ([scope], o) => withManager(o, async (m) => out((await m.createScope(scope)) ? 'created' : 'exists')),
  },
  'scope delete': {
    usage: 'kvt scope delete SCOPE',
    summary: 'Deletes an empty scope (prints "deleted" or "missing").',
    options: CONNECTION,
    args: [1, 1],
    run: ([scope], o) => withManager(o, async (m) => out((await m.deleteScope(scope)) ? 'deleted' : 'missing')),
  },
  'scope list': {
    usage: 'kvt scope list',
    summary: 'Lists scopes, one a line.',
    options: CONNECTION,
    args: [0, 0],
    run: (_a, o) =>
      withManager(o, async (m) => {
        for await (const scope of m.listScopes()) out(scope);
      }),
  },
  'table create': {
    usage: 'kvt table create SCOPE/TABLE --partitions N',
    summary: 'Creates a key-value table (prints "created" or "exists").',
    options: [
      ...CONNECTION,
      { flag: 'partitions', kind: 'int', default: 4, min: MIN_PARTITION_COUNT, max: MAX_PARTITION_COUNT, description: `partition count (${MIN_PARTITION_COUNT}-${MAX_PARTITION_COUNT})` },
    ],
    args: [1, 1],
    run: ([t], o) =>
      withManager(o, async (m) => {
        const { scope, table } = parseTablePath(t);
        out((await m.createKeyValueTable(scope, table, { partitionCount: Number(o.partitions) })) ? 'created' : 'exists');
      }),
  },
  'table get': {
    usage: 'kvt table get SCOPE/TABLE',
    summary: 'Prints the configuration of a table as JSON.',
    options: CONNECTION,
    args: [1, 1],
    run: ([t], o) =>
      withManager(o, async (m) => {
        const { scope, table } = parseTablePath(t);
        out(JSON.stringify(await m.getKeyValueTableConfiguration(scope, table)));
      }),
  },
  'table describe': {
    usage: 'kvt table describe SCOPE/TABLE [--contents] [--family F | --key K] [--json]',
    summary: "Prints a table's state and, per partition, its hash range, segment and owning store (and what it holds, with --contents).",
    options: [
      ...CONNECTION,
      { flag: 'contents', kind: 'bool', default: false, description: "count each partition's live entries and bytes (each store reads them all)" },
      { ...FAMILY, description: 'only the partition holding this key family' },
      { flag: 'key', kind: 'string', description: 'only the partition holding this family-less key' },
      { flag: 'json', kind: 'bool', default: false, description: 'print the description as one JSON object' },
    ],
    args: [1, 1],
    run: ([t], o) =>
      withManager(o, async (m) => {
        const { scope, table } = parseTablePath(t);
        const contents = o.contents === true;
        const d = await m.describeKeyValueTable(scope, table, { contents });
        const only =
          o.family !== undefined ? partitionOf(d.partitionCount, String(o.family)) : o.key !== undefined ? partitionOf(d.partitionCount, null, Buffer.from(String(o.key), 'utf8')) : undefined;
        const partitions = d.partitions.filter((p) => only === undefined || p.partition === only);
        if (o.json === true) out(JSON.stringify({ ...d, partitions }));
        else for (const line of formatTableDescription(d, partitions, contents)) out(line);
      }),
  },
  'table delete': {
    usage: 'kvt table delete SCOPE/TABLE',
    summary: 'Deletes a table and all its data (prints "deleted" or "missing").',
    options: CONNECTION,
    args: [1, 1],
    run: ([t], o) =>
      withManager(o, async (m) => {
        const { scope, table } = parseTablePath(t);
        out((await m.deleteKeyValueTable(scope, table)) ? 'deleted' : 'missing');
      }),
  },
  'table list': {
    usage: 'kvt table list SCOPE',
    summary: 'Lists the tables of a scope, one SCOPE/TABLE a line.',
    options: CONNECTION,
    args: [1, 1],
    run: ([scope], o) =>
      withManager(o, async (m) => {
        for await (const t of m.listKeyValueTables(scope)) out(`${t.scope}/${t.name}`);
      }),
  },
  'store list': {
    usage: 'kvt store list',
    summary: 'Lists the segment stores: id, address, live or dead, last heartbeat, segments owned.',
    options: CONNECTION,
    args: [0, 0],
    run: (_a, o) =>
      withManager(o, async (m) => {
        for (const line of formatStoreList(await m.listSegmentStores())) out(line);
      }),
  },
  'store remove': {
    usage: 'kvt store remove STORE-ID [--force]',
    summary: 'Retires a dead segment store for good; prints what happened to each table it held.',
    options: [...CONNECTION, { flag: 'force', kind: 'bool', default: false, description: 'also when partitions of ACTIVE tables lose their data (they start again empty)' }],
    args: [1, 1],
    run: ([id], o) =>
      withManager(o, async (m) => {
        for (const line of formatRemoval(await m.removeSegmentStore(id, { force: o.force === true }))) out(line);
      }),
  },
  put: {
    usage: 'kvt put SCOPE/TABLE [--family F] [--ttl-ms N] [--if-absent | --if-version V] KEY (VALUE | - | --value-file F)',
    summary: 'Writes one key (only if absent, or only at version V); prints its new version. VALUE "-" reads the value from stdin, --value-file from a file (any bytes, as etcdctl put does).',
    options: [
      ...CONNECTION,
      FAMILY,
      { flag: 'ttl-ms', kind: 'int', min: 1, description: 'expire the entry after this many ms' },
      { flag: 'if-absent', kind: 'bool', default: false, description: 'write only if the key does not exist' },
      { flag: 'value-file', kind: 'string', description: 'read the value from this file (its bytes as they are); no VALUE' },
      IF_VERSION,
    ],
    args: [2, 3],
    run: ([t, key, value], o) => {
      const version = ifVersion(o);
      if (version && o['if-absent'] === true) throw new UsageError('--if-absent and --if-version exclude each other');
      if ((value === undefined) === (o['value-file'] === undefined)) throw new UsageError('give the value as VALUE, "-" (stdin) or --value-file F: exactly one');
      const bytes = value === undefined ? readValueFile(String(o['value-file'])) : value === '-' ? readValueFile('-') : Buffer.from(value, 'utf8');
      return withTable(t, o, TEXT_KEYS_BYTE_VALUES, async (kvt) => {
        const ttl = o['ttl-ms'] === undefined ? undefined : { ttlMs: Number(o['ttl-ms']) };
        const written = version ? kvt.replace(family(o), key, bytes, version, ttl) : o['if-absent'] === true ? kvt.putIfAbsent(family(o), key, bytes, ttl) : kvt.put(family(o), key, bytes, ttl);
        out(String(await written));
      });
    },
  },
  get: {
    usage: 'kvt get SCOPE/TABLE [--family F] [--json | --out F] KEY',
    summary: 'Prints the value of one key (exit 1 when missing); --out writes its bytes to a file instead.',
    options: [
      ...CONNECTION,
      FAMILY,
      { flag: 'json', kind: 'bool', default: false, description: 'print {"family"?, "key", "value", "version"} as one JSON line' },
      { flag: 'out', kind: 'string', description: 'write the value, byte for byte, to this file (nothing printed)' },
    ],
    args: [2, 2],
    run: ([t, key], o) => {
      if (o.out !== undefined && o.json === true) throw new UsageError('--json and --out exclude each other');
      return withTable(t, o, TEXT_KEYS_BYTE_VALUES, async (kvt) => {
        const entry = await kvt.get(family(o), key);
        if (!entry) {
          process.stderr.write(`kvt get: key "${key}" not found\n`);
          return 1;
        }
        const value = Buffer.from(entry.value.buffer, entry.value.byteOffset, entry.value.byteLength);
        if (o.out !== undefined) {
          writeValueFile(String(o.out), value);
          return;
        }
        const text = value.toString('utf8');
        out(o.json === true ? JSON.stringify({ ...(o.family === undefined ? {} : { family: family(o) }), key, value: text, version: String(entry.version) }) : text);
      });
    },
  },
  remove: {
    usage: 'kvt remove SCOPE/TABLE [--family F] [--if-version V] KEY | --family F (--prefix P | --all)',
    summary: 'Removes one key (only at version V; a missing key is fine without), or every key of a family (starting with P).',
    options: [
      ...CONNECTION,
      FAMILY,
      IF_VERSION,
      { flag: 'prefix', kind: 'string', description: 'remove every key of --family starting with this, in one atomic batch; no KEY' },
      { flag: 'all', kind: 'bool', default: false, description: 'remove every key of --family, in one atomic batch; no KEY' },
    ],
    args: [1, 2],
    run: ([t, key], o) => {
      const range = rangeOf(o, key);
      if (range !== undefined) {
        return withTable(t, o, TEXT, (kvt) => kvt.update(String(o.family), [{ type: 'removeRange', prefix: range }]).then(() => undefined));
      }
      if (key === undefined) throw new UsageError('expected a KEY, or --prefix P / --all to remove keys of the family');
      const version = ifVersion(o);
      return withTable(t, o, TEXT, (kvt) => kvt.remove(family(o), key, version));
    },
  },
  keys: {
    usage: 'kvt keys SCOPE/TABLE --family F [--prefix P] [--reverse] [--limit N]',
    summary: 'Lists the keys of a key family in order, one a line.',
    options: [
      ...CONNECTION,
      FAMILY,
      { flag: 'prefix', kind: 'string', description: 'only keys starting with this' },
      { flag: 'reverse', kind: 'bool', default: false, description: 'descending order' },
      { flag: 'limit', kind: 'int', min: 1, description: 'at most this many keys' },
    ],
    args: [1, 1],
    run: ([t], o) =>
      withTable(t, o, TEXT, async (kvt) => {
        if (o.family === undefined) throw new UsageError('keys needs --family F (iteration is within one key family)');
        const limit = o.limit === undefined ? Infinity : Number(o.limit);
        let printed = 0;
        const pages = kvt.keyIterator(String(o.family), {
          maxKeysAtOnce: Math.min(1000, limit),
          prefix: o.prefix as string | undefined,
          reverse: o.reverse === true,
        });
        for await (const page of pages) {
          for (const item of page.items) {
            if (printed++ >= limit) return;
            out(item.key);
          }
        }
      }),
  },
  import: {
    usage: 'kvt import SCOPE/TABLE FILE.jsonl',
    summary: 'Loads JSON lines {"family"?, "key", "value"} (progress bar on a terminal).',
    options: CONNECTION,
    args: [2, 2],
    run: ([t, file], o) => withTable(t, o, BYTES, (kvt) => importFile(kvt, file)),
  },
  export: {
    usage: 'kvt export SCOPE/TABLE [--family F]',
    summary: 'Writes every entry (or one family) as JSON lines {"family"?, "key", "value"}.',
    options: [...CONNECTION, FAMILY],
    args: [1, 1],
    run: ([t], o) => withTable(t, o, BYTES, (kvt) => exportTable(kvt, family(o))),
  },
};

const GROUPS = ['scope', 'table', 'store'];

/** Entry point of the client commands: argv starts with the command name. */
export async function main(argv: string[]): Promise<void> {
  quietIpServernameWarning();
  const grouped = GROUPS.includes(argv[0]);
  const name = grouped ? `${argv[0]} ${argv[1] ?? ''}`.trim() : argv[0];
  const rest = argv.slice(grouped ? 2 : 1);
  const command = COMMANDS[name];
  if (!command) {
    if (grouped && (argv[1] === undefined || argv[1] === '--help' || argv[1] === '-h')) {
      const subs = Object.keys(COMMANDS).filter((c) => c.startsWith(argv[0] + ' '));
      process.stdout.write(`Usage: kvt ${argv[0]} <${subs.map((s) => s.split(' ')[1]).join(' | ')}> …\n\n`);
      for (const sub of subs) process.stdout.write(`  ${COMMANDS[sub].usage.padEnd(50)} ${COMMANDS[sub].summary}\n`);
      if (argv[1] === undefined) process.exitCode = 2;
      return;
    }
    process.stderr.write(`kvt: unknown command "${name}" (see kvt --help)\n`);
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
    const code = await command.run(positionals, options);
    process.exitCode = code ?? 0;
  } catch (err) {
    const usage = err instanceof UsageError;
    const code = err instanceof KvtError ? ` [${err.code}]` : '';
    process.stderr.write(`kvt ${name}: ${(err as Error).message}${code}\n`);
    process.exitCode = usage ? 2 : 1;
  }
}
