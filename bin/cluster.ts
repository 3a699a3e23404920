/**
 * `kvt cluster`: a local cluster of real processes — one controller and N segment stores, each a child
 * `kvt` process with its data under one directory (with `--couch-port`, also the CouchDB endpoint
 * `kvt couch`). What `npm start` runs. Ctrl-C (or SIGTERM) stops the
 * stores, then the controller; if any child dies on its own, the rest are stopped and the exit code is 1.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { joinHostPort } from '../server-kit/address';
import { helpText, OptionSpec, parseOptions, ParsedOptions, UsageError } from '../server-kit/flags';
import { nodeFlagsFor } from '../server-kit/node-flags';

export const CLUSTER_OPTIONS: readonly OptionSpec[] = [
  { flag: 'data-dir', env: 'DATA_DIR', kind: 'string', default: './data', description: 'directory holding controller/ and segmentstore-<i>/' },
  { flag: 'segment-stores', env: 'SEGMENT_STORES', kind: 'int', default: 2, min: 1, max: 64, description: 'number of segment stores' },
  { flag: 'host', env: 'HOST', kind: 'string', default: '127.0.0.1', description: 'address every process binds' },
  { flag: 'controller-port', env: 'CONTROLLER_PORT', kind: 'int', default: 9090, min: 1, max: 65535, description: 'controller port (stores are told it)' },
  { flag: 'segment-store-port', env: 'SEGMENT_STORE_PORT', kind: 'int', default: 12345, min: 0, max: 65535, description: 'port of the first segment store (the next ones count up)' },
  { flag: 'tls-cert', env: 'TLS_CERT', kind: 'string', description: 'PEM certificate file every process serves TLS with (needs --tls-key)' },
  { flag: 'tls-key', env: 'TLS_KEY', kind: 'string', description: 'PEM private key file of --tls-cert' },
  { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: 'PEM CA file the processes trust for their calls to each other' },
  { flag: 'data-token', env: 'DATA_TOKEN', kind: 'string', emptyEnvRefused: true, description: 'bearer token for data/read calls (prefer the env variable)' },
  { flag: 'admin-token', env: 'ADMIN_TOKEN', kind: 'string', emptyEnvRefused: true, description: 'bearer token for admin calls (prefer the env variable)' },
  {
    flag: 'metrics-port',
    env: 'METRICS_PORT',
    kind: 'int',
    default: 0,
    min: 0,
    max: 65535,
    description: "Prometheus port of the controller; the stores' count up from the next (0 = each an ephemeral port, logged)",
  },
  { flag: 'http-port', env: 'HTTP_PORT', kind: 'int', default: 0, min: 0, max: 65535, description: "port of the controller's status page (0 = ephemeral, logged)" },
  {
    flag: 'couch-port',
    env: 'COUCH_PORT',
    kind: 'int',
    min: 0,
    max: 65535,
    description: 'also run `kvt couch` (the CouchDB endpoint, scope "couch") on this port (0 = ephemeral, logged; off unless given)',
  },
];

/** Port `base + offset`, or 0 (ephemeral) when `base` is 0. */
const portAt = (base: number, offset: number): string => String(base === 0 ? 0 : base + offset);

const TLS_FLAGS = ['tls-cert', 'tls-key', 'tls-ca'] as const;
const TOKEN_FLAGS = ['data-token', 'admin-token'] as const;
/** The environment suffix of a cluster option, which the children's option of the same name shares. */
const envOf = (flag: string): string => CLUSTER_OPTIONS.find((s) => s.flag === flag)!.env!;

/**
 * The TLS flags to pass on (paths made absolute) and the tokens as the children's env variables. The
 * cluster owns its children's security: the shell's own KVT_CONTROLLER_* / KVT_SEGMENTSTORE_* token
 * and TLS variables are not passed on (undefined here removes them), or a leftover one could give the
 * controller and the stores different tokens.
 */
function security(o: ParsedOptions, envPrefix: 'KVT_CONTROLLER' | 'KVT_SEGMENTSTORE' | 'KVT_COUCH'): { args: string[]; env: NodeJS.ProcessEnv } {
  const args: string[] = [];
  for (const flag of TLS_FLAGS) if (o[flag] !== undefined) args.push(`--${flag}`, path.resolve(String(o[flag])));
  // Tokens go through the environment, not argv, so they do not show in `ps`.
  const env: NodeJS.ProcessEnv = {};
  for (const flag of TLS_FLAGS) env[`${envPrefix}_${envOf(flag)}`] = undefined;
  for (const flag of TOKEN_FLAGS) env[`${envPrefix}_${envOf(flag)}`] = o[flag] === undefined ? undefined : String(o[flag]);
  return { args, env };
}

export const CLUSTER_ENV_PREFIX = 'KVT_CLUSTER';
const LAUNCHER = path.resolve(__dirname, '..', '..', 'bin', 'kvt.js');

interface Child {
  name: string;
  proc: ChildProcess;
  exited: Promise<number | null>;
}

/** Spawns `kvt <args>`: the cluster's environment with `env` over it (an undefined value removes the variable). */
function launch(name: string, args: string[], env: NodeJS.ProcessEnv = {}): Child {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[key];
    else childEnv[key] = value;
  }
  const proc = spawn(process.execPath, [...nodeFlagsFor(args), LAUNCHER, ...args], { stdio: ['ignore', 'inherit', 'inherit'], env: childEnv });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { name, proc, exited };
}

/** Waits (bounded) until a TCP port accepts connections, so stores find the controller at once. */
async function waitForPort(host: string, port: number, child: Child, timeoutMs = 20_000): Promise<void> {
  const net = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited with code ${child.proc.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} did not listen on ${host}:${port} within ${timeoutMs} ms`);
}

async function stopAll(children: Child[]): Promise<void> {
  // Stores first, controller last: the reverse of start.
  for (const child of [...children].reverse()) {
    if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGTERM');
    const timer = setTimeout(() => child.proc.kill('SIGKILL'), 10_000);
    await child.exited;
    clearTimeout(timer);
  }
}

/** The options of `kvt cluster`, checked; exits 2 with one line on bad usage. */
function parseOrExit(argv: string[]): ReturnType<typeof parseOptions> {
  try {
    const parsed = parseOptions(CLUSTER_OPTIONS, argv, process.env, CLUSTER_ENV_PREFIX);
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}" (see --help)`);
    if (parsed.options['tls-ca'] !== undefined && parsed.options['tls-cert'] === undefined) {
      // A process with only a CA serves plaintext but calls its peers over TLS: the stores could never register.
      throw new UsageError('--tls-ca needs --tls-cert and --tls-key (a TLS cluster serves TLS in every process)');
    }
    const first = Number(parsed.options['segment-store-port']);
    const last = first + Number(parsed.options['segment-stores']) - 1;
    if (first !== 0 && last > 65535) {
      throw new UsageError(`--segment-store-port ${first} with --segment-stores ${parsed.options['segment-stores']} needs ports up to ${last}; the maximum is 65535`);
    }
    const metrics = Number(parsed.options['metrics-port']);
    if (metrics !== 0 && metrics + Number(parsed.options['segment-stores']) > 65535) {
      throw new UsageError(
        `--metrics-port ${metrics} with --segment-stores ${parsed.options['segment-stores']} needs ports up to ${metrics + Number(parsed.options['segment-stores'])}; the maximum is 65535`,
      );
    }
    return parsed;
  } catch (err) {
    process.stderr.write(`kvt cluster: ${(err as Error).message}\n`);
    process.exit(2);
  }
}

/** The data directory, made absolute and created; exits 1 with one line when it cannot be created. */
function createDataDir(given: string): string {
  const dataDir = path.resolve(given);
  try {
    fs.mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    process.stderr.write(`kvt cluster: cannot create the data directory ${dataDir}: ${(err as Error).message}\n`);
    process.exit(1);
  }
  return dataDir;
}

/** The cluster's children: starts them, and stops them all once (on a signal, or when any of them exits). */
class Children {
  private readonly started: Child[] = [];
  stopping = false;

  /** Stops every child, then exits with `code`; later calls do nothing. */
  shutdown(code: number): void {
    if (this.stopping) return;
    this.stopping = true;
    stopAll(this.started).then(() => process.exit(code));
  }

  /** Starts a child; its exit stops the cluster (with 1, unless the cluster is stopping anyway). */
  start(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
    const child = launch(name, args, env);
    this.started.push(child);
    child.exited.then(() => this.shutdown(this.stopping ? 0 : 1));
    return child;
  }
}

/** Starts the segment stores, each told where the controller is; none more once the cluster is stopping. */
function startStores(children: Children, o: ParsedOptions, host: string, controllerPort: number, dataDir: string): void {
  const storeSecurity = security(o, 'KVT_SEGMENTSTORE');
  for (let i = 0; i < Number(o['segment-stores']); i++) {
    if (children.stopping) return; // Ctrl-C while starting: start no more children than stopAll has seen
    const port = Number(o['segment-store-port']) === 0 ? 0 : Number(o['segment-store-port']) + i;
    const metrics = ['--metrics-port', portAt(Number(o['metrics-port']), i + 1)];
    children.start(
      `segmentstore-${i}`,
      [
        'segmentstore',
        '--host',
        host,
        '--port',
        String(port),
        '--data-dir',
        path.join(dataDir, `segmentstore-${i}`),
        '--controller',
        joinHostPort(host, controllerPort),
        ...metrics,
        ...storeSecurity.args,
      ],
      storeSecurity.env,
    );
  }
}

/** Entry point of `kvt cluster`. */
export async function main(argv: string[]): Promise<void> {
  const parsed = parseOrExit(argv);
  if (parsed.help) {
    process.stdout.write(helpText('kvt cluster [options]', 'Runs a local kvt cluster: a controller and segment stores, each a child process.', CLUSTER_OPTIONS, CLUSTER_ENV_PREFIX) + '\n');
    return;
  }
  const o = parsed.options;
  const dataDir = createDataDir(String(o['data-dir']));
  const host = String(o.host);
  const controllerPort = Number(o['controller-port']);

  const children = new Children();
  process.on('SIGINT', () => children.shutdown(0));
  process.on('SIGTERM', () => children.shutdown(0));
  const controllerSecurity = security(o, 'KVT_CONTROLLER');
  const controller = children.start(
    'controller',
    [
      'controller',
      '--host',
      host,
      '--port',
      String(controllerPort),
      '--data-dir',
      path.join(dataDir, 'controller'),
      '--metrics-port',
      String(o['metrics-port']),
      '--http-port',
      String(o['http-port']),
      ...controllerSecurity.args,
    ],
    controllerSecurity.env,
  );
  try {
    await waitForPort(host, controllerPort, controller);
  } catch (err) {
    process.stderr.write(`kvt cluster: ${(err as Error).message}\n`);
    children.shutdown(1);
    return;
  }
  startStores(children, o, host, controllerPort, dataDir);
  if (o['couch-port'] !== undefined && !children.stopping) {
    const couchSecurity = security(o, 'KVT_COUCH');
    const couch = ['couch', '--host', host, '--port', String(o['couch-port']), '--controller', joinHostPort(host, controllerPort)];
    children.start('couch', [...couch, ...couchSecurity.args], couchSecurity.env);
  }
}
