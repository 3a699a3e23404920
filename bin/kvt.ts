/**
 * `kvt <command>`: dispatches to the server processes (controller, segmentstore, cluster) and the
 * client commands (scope, table, store, put, get, remove, keys, import, export, pages). Each command module exports
 * `main(argv)` and is loaded only when used, so `kvt get` does not load LevelDB.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const USAGE = `Usage: kvt <command> [options]

Server processes:
  controller     run the controller (scopes, tables, placement)
  segmentstore   run a segment store (table segments on LevelDB)
  cluster        run a local cluster: controller + segment stores (what \`npm start\` runs)
  couch          serve a scope's tables as CouchDB databases (PouchDB/CouchDB replication)

Client commands:
  scope          create | delete | list scopes
  table          create | get | describe | delete | list key-value tables
  store          list segment stores | remove a dead one for good
  put | get      write or read one key (put only if absent or at a version)
  remove         remove one key (only at a version)
  keys           list the keys of a key family
  import|export  load or dump a table as JSON lines
  status         every store and table's placement; exits 1 when a partition is on a dead store
  health         a process's grpc.health.v1 status (exits 0 only when SERVING)
  archive        stats | get | append: the archive tier (kvt table or Cassandra)
  pages          page revisions and renders: put | get | list | import | export

Run \`kvt <command> --help\` for the options of a command; \`kvt --version\` prints the version.`;

type CommandMain = (argv: string[]) => Promise<void>;

/** The version of the kvt package: its package.json is above this file, in the source tree as in dist/. */
function packageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'kvt' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`the package.json of kvt was not found above ${__dirname}`);
  }
}

function load(command: string): CommandMain | undefined {
  /* eslint-disable @typescript-eslint/no-require-imports */
  switch (command) {
    case 'controller':
      return require('../controller/main').main;
    case 'segmentstore':
      return require('../segmentstore/main').main;
    case 'cluster':
      return require('./cluster').main;
    case 'status':
    case 'health':
      return (argv) => require('./cli-status').main([command, ...argv]);
    case 'archive':
      return require('./cli-archive').main;
    case 'couch':
      return require('./cli-couch').main;
    case 'scope':
    case 'table':
    case 'store':
    case 'put':
    case 'get':
    case 'remove':
    case 'keys':
    case 'import':
    case 'export':
      return (argv) => require('./cli').main([command, ...argv]);
    case 'pages':
      return require('./cli-pages').main;
    default:
      return undefined;
  }
}

/** Entry point of the `kvt` command. */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    if (command === undefined) process.exitCode = 2;
    return;
  }
  if (command === '--version') {
    process.stdout.write(packageVersion() + '\n');
    return;
  }
  const run = load(command);
  if (!run) {
    process.stderr.write(`kvt: unknown command "${command}" (see kvt --help)\n`);
    process.exitCode = 2;
    return;
  }
  try {
    await run(rest);
  } catch (err) {
    // Commands report their own failures; this is the last resort, so that nothing ends in a stack trace.
    process.stderr.write(`kvt ${command}: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 1;
  }
}
