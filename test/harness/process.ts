/**
 * Starts real kvt processes (`node bin/kvt.js <command> …`) for integration tests: waits for the
 * JSON log line that says the process is listening, exposes its port and logs, and cleans up through
 * `Symbol.asyncDispose`. Requires `npm run build` (npm test runs it first).
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { nodeFlagsFor } from '../../server-kit/node-flags';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const KVT_BIN = path.join(REPO_ROOT, 'bin', 'kvt.js');

/** A JSON log line of a kvt process. */
export type LogRecord = Record<string, unknown> & { msg?: string };

export interface KvtProcessOptions {
  /** Extra environment variables. */
  env?: NodeJS.ProcessEnv;
  /** The `msg` of the log line that says the process is ready; it must carry a `port` field. */
  readyMsg?: string;
  /** How long to wait for the ready line. @default 20000 */
  readyTimeoutMs?: number;
  /** Told of the process as soon as it is spawned, before its ready line. */
  onSpawned?: (proc: KvtProcess) => void;
}

/** A running kvt child process. */
export class KvtProcess {
  readonly logs: LogRecord[] = [];
  readonly stderr: string[] = [];
  port = 0;
  private exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(
    readonly args: string[],
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? null : code);
        resolve(code);
      });
    });
    let buffered = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          this.logs.push(JSON.parse(line));
        } catch {
          this.logs.push({ msg: '<non-json>', line });
        }
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.push(chunk));
  }

  /** `127.0.0.1:<port>`. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Its last `n` log records, one a line (each cut at 300 characters), for error messages. */
  lastLogLines(n = 8): string {
    const last = this.logs
      .slice(-n)
      .map((r) => JSON.stringify(r).slice(0, 300))
      .join('\n  ');
    return last || '(none)';
  }

  /** Resolves with the first log record whose msg is `msg` (and that matches `where`). */
  async waitForLog(msg: string, timeoutMs = 20_000, where: (r: LogRecord) => boolean = () => true): Promise<LogRecord> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logs.find((r) => r.msg === msg && where(r));
      if (found) return found;
      if (!this.running) {
        throw new Error(`kvt ${this.args.join(' ')} exited (${this.exitCode}) before logging "${msg}": ${this.stderr.join('')}`);
      }
      if (Date.now() > deadline) {
        // What the process said meanwhile tells why (a store refused by the controller, retrying, …).
        throw new Error(`timed out waiting for "${msg}" from kvt ${this.args.join(' ')}; its last log lines:\n  ${this.lastLogLines()}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Sends `signal` and waits for the exit; resolves the exit code (null when killed by a signal). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  /** Graceful stop (SIGTERM), then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<number | null> {
    if (!this.running) return this.exitCode ?? null;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the process to exit by itself. */
  waitForExit(): Promise<number | null> {
    return this.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/** Spawns `kvt <args>` without waiting for anything. */
export function spawnKvt(args: string[], env: NodeJS.ProcessEnv = {}): KvtProcess {
  // Stores run with the node flags `kvt cluster` gives them.
  const child = spawn(process.execPath, [...nodeFlagsFor(args), KVT_BIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new KvtProcess(args, child);
}

/** Spawns `kvt <args>` and waits for its ready log line (which must carry `port`). */
export async function startKvt(args: string[], options: KvtProcessOptions = {}): Promise<KvtProcess> {
  const proc = spawnKvt(args, options.env);
  options.onSpawned?.(proc);
  if (options.readyMsg) {
    try {
      const ready = await proc.waitForLog(options.readyMsg, options.readyTimeoutMs ?? 20_000);
      proc.port = Number(ready.port);
    } catch (err) {
      await proc.kill();
      throw err;
    }
  }
  return proc;
}

/** Starts `kvt controller --port 0 --data-dir dir`. */
export function startController(dataDir: string, extraArgs: string[] = [], env?: NodeJS.ProcessEnv): Promise<KvtProcess> {
  return startKvt(['controller', '--port', '0', '--data-dir', dataDir, ...extraArgs], { readyMsg: 'controller started', env });
}

/** Starts `kvt segmentstore --port 0 --data-dir dir [--controller addr]`. */
export function startSegmentStore(dataDir: string, controller?: string, extraArgs: string[] = [], env?: NodeJS.ProcessEnv): Promise<KvtProcess> {
  const args = ['segmentstore', '--port', '0', '--data-dir', dataDir, ...extraArgs];
  if (controller) args.push('--controller', controller);
  return startKvt(args, { readyMsg: 'segment store started', env });
}

/** The first port of the kernel's ephemeral range (where `listen(0)` and outgoing connections get theirs). */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // not Linux: use the IANA range's start
  }
  return 49152;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const STABLE_PORTS_FROM = 10_000;

/**
 * A loopback port that was free a moment ago, for a process that must be told its port up front or
 * that is stopped and started again on the same port. It lies below the kernel's ephemeral range:
 * the kernel never hands such a port to a `listen(0)` or to an outgoing connection, so another test
 * running in parallel cannot take it while the process is down (a port from `listen(0)` could be,
 * and a restart on it then failed with the port taken).
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  if (low <= STABLE_PORTS_FROM + 1_000) throw new Error(`the ephemeral port range starts at ${low}; freePort needs it above ${STABLE_PORTS_FROM + 1_000}`);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = STABLE_PORTS_FROM + Math.floor(Math.random() * (low - STABLE_PORTS_FROM));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port between ${STABLE_PORTS_FROM} and ${low} after 100 tries`);
}

/** A fresh temp directory, removed by `dispose()`. */
export function tempDir(prefix = 'kvt-test-'): { path: string; dispose(): void; [Symbol.dispose](): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const dispose = () => fs.rmSync(dir, { recursive: true, force: true });
  return { path: dir, dispose, [Symbol.dispose]: dispose };
}

/** A local cluster: a controller and `stores` segment stores registered with it. */
export class TestCluster {
  /** The controller process restartController started and that has not logged its start yet. */
  private restarting: KvtProcess | undefined;

  private constructor(
    readonly root: string,
    readonly controller: KvtProcess,
    readonly stores: KvtProcess[],
  ) {}

  /**
   * Starts the controller (on a stable port, see freePort) and the stores, on ephemeral ports unless
   * `stableStorePorts`: then on stable ones too, so that a store can be restarted on its own port
   * (`restartStore(i, cluster.stores[i].port)`), which the controller accepts at once (from another
   * address, only once the old one has been silent for the store timeout).
   */
  static async start(options: { stores?: number; root?: string; controllerArgs?: string[]; storeArgs?: string[]; stableStorePorts?: boolean } = {}): Promise<TestCluster> {
    const root = options.root ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-cluster-'));
    // On a stable port, so that restartController(port) finds it free again.
    const controllerArgs = ['--port', String(await freePort()), ...(options.controllerArgs ?? [])];
    const controller = await startController(path.join(root, 'controller'), controllerArgs);
    const stores: KvtProcess[] = [];
    try {
      for (let i = 0; i < (options.stores ?? 2); i++) {
        const port = options.stableStorePorts ? ['--port', String(await freePort())] : [];
        const store = await startSegmentStore(path.join(root, `segmentstore-${i}`), controller.address, [...port, ...(options.storeArgs ?? [])]);
        await store.waitForLog('registered with controller');
        stores.push(store);
      }
    } catch (err) {
      await Promise.all([controller.kill(), ...stores.map((s) => s.kill())]);
      throw err;
    }
    return new TestCluster(root, controller, stores);
  }

  get controllerAddress(): string {
    return this.controller.address;
  }

  /** Restarts the controller on the same data dir (new port unless `port` is given). */
  async restartController(port = 0): Promise<KvtProcess> {
    const args = ['controller', '--port', String(port), '--data-dir', path.join(this.root, 'controller')];
    let spawned: KvtProcess | undefined;
    try {
      const proc = await startKvt(args, { readyMsg: 'controller started', onSpawned: (p) => (this.restarting = spawned = p) });
      (this as { controller: KvtProcess }).controller = proc;
      return proc;
    } finally {
      if (this.restarting === spawned) this.restarting = undefined;
    }
  }

  /**
   * Restarts segment store `index` on its data dir (a new ephemeral port unless `port` is given) and
   * waits until the controller accepted its registration.
   */
  async restartStore(index: number, port = 0, extraArgs: string[] = []): Promise<KvtProcess> {
    const args = ['--port', String(port), ...extraArgs];
    const proc = await startSegmentStore(path.join(this.root, `segmentstore-${index}`), this.controller.address, args);
    this.stores[index] = proc;
    try {
      await proc.waitForLog('registered with controller');
    } catch (err) {
      // A store that cannot register is mostly about the controller: say what it was doing.
      throw new Error(`${(err as Error).message}\n${this.controllerState()}`, { cause: err });
    }
    return proc;
  }

  /** The controller (or the one being restarted) as a store waiting for it would want to know it. */
  private controllerState(): string {
    const c = this.restarting ?? this.controller;
    const what = this.restarting ? 'the controller being restarted' : 'the controller';
    const state = c.running ? 'running' : 'no longer running';
    const stderr = c.stderr.length > 0 ? `\n  stderr: ${c.stderr.join('').slice(-500)}` : '';
    return `${what} (kvt ${c.args.join(' ')}) is ${state}; its last log lines:\n  ${c.lastLogLines()}${stderr}`;
  }

  async stop(): Promise<void> {
    await Promise.all(this.stores.map((s) => s.stop()));
    await this.controller.stop();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
