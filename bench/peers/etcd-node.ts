/**
 * A single-node etcd for the benchmark: Debian's `etcd` binary (scripts/install-etcd.sh), loopback
 * only, ephemeral client and peer ports, a temp data dir removed on stop, auto-compaction on.
 * etcd fsyncs its WAL before acknowledging every write, which is the durability kvt must match.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { LineWatcher, freePort, killOnExit, makeTempDir, removeDir, stopChild } from '../core/processes';
import { repoRoot } from './peer';

/** Options for {@link startEtcd}. */
export interface EtcdNodeOptions {
  /** The etcd binary. @default "etcd" (on PATH) */
  binary?: string;
  /** How long to wait for /health. @default 20000 */
  readyTimeoutMs?: number;
}

/** A running etcd; `stop()` kills it and deletes its data. */
export interface EtcdNode {
  readonly endpoint: string;
  /** The pid of the running process (a restart changes it). */
  readonly pid: number;
  readonly version: string;
  /**
   * Stops etcd (SIGTERM: it syncs and closes its backend) and starts it again on the same data dir and
   * ports; resolves once /health says true. Clients reconnect on their own.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Makes sure etcd is installed, running scripts/install-etcd.sh (apt-get, needs root or sudo) when
 * it is not; bounded to 5 minutes. Resolves the version line, or undefined when it still is not there.
 */
export function ensureEtcdInstalled(log: (line: string) => void): string | undefined {
  const found = etcdVersion();
  if (found) return found;
  log('etcd not on PATH: running scripts/install-etcd.sh');
  const script = path.join(repoRoot(), 'scripts', 'install-etcd.sh');
  spawnSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 });
  return etcdVersion();
}

/** The etcd version line, or undefined when etcd is not installed. */
export function etcdVersion(binary = 'etcd'): string | undefined {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout) return undefined;
  return r.stdout.split('\n')[0].trim();
}

function etcdArgs(dataDir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    '--name',
    'bench',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `bench=${peer}`,
    '--initial-cluster-state',
    'new',
    // Keep the MVCC history short so long runs do not grow without bound.
    '--auto-compaction-mode',
    'revision',
    '--auto-compaction-retention',
    '10000',
    '--quota-backend-bytes',
    String(8 * 1024 ** 3),
    '--logger',
    'zap',
    '--log-outputs',
    'stderr',
    '--log-level',
    'warn',
  ];
}

function healthy(clientPort: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: clientPort, path: '/health', timeout: 1_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('"true"')));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

async function waitHealthy(child: ChildProcess, watcher: LineWatcher, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await healthy(port))) {
    if (child.exitCode !== null) throw new Error(`etcd exited (${child.exitCode}): ${watcher.tail()}`);
    if (Date.now() > deadline) throw new Error(`etcd not healthy after ${timeoutMs} ms: ${watcher.tail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a fresh single-node etcd and resolves once /health says true. */
export async function startEtcd(options: EtcdNodeOptions = {}): Promise<EtcdNode> {
  const binary = options.binary ?? 'etcd';
  const version = etcdVersion(binary);
  if (!version) throw new Error(`etcd not found (run scripts/install-etcd.sh)`);
  const dataDir = makeTempDir('etcd');
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = killOnExit(spawn(binary, etcdArgs(dataDir, clientPort, peerPort), { stdio: ['ignore', 'pipe', 'pipe'] }));
    await waitHealthy(child, new LineWatcher(child, [child.stdout!, child.stderr!]), clientPort, readyTimeoutMs);
  };
  const stop = async (): Promise<void> => {
    if (child) await stopChild(child);
    removeDir(dataDir);
  };
  try {
    await launch();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    endpoint: `127.0.0.1:${clientPort}`,
    get pid() {
      return child!.pid!;
    },
    version,
    async restart() {
      await stopChild(child!);
      await launch();
    },
    stop,
  };
}
