/**
 * Pravega 0.13's own Key-Value Tables, the design kvt is modelled on: its standalone server
 * (scripts/pravega.sh, in memory: nothing it acknowledges is durable) driven through Pravega's Java
 * client by bench/peers/pravega (a child JVM), which takes this peer's operations as binary frames on
 * its stdin and answers on its stdout (the frame layout is documented in PravegaDriver.java). So the
 * workloads, key streams, latency histograms and CPU meters are the ones every peer runs under; the
 * pipe adds one local hop to each operation's latency, which the report's notes state.
 *
 * A family-less key is a primary key of a table without secondary keys; a key of a family is (family
 * as primary key, key as secondary key) of a second table (Pravega's fixed-length keys: 24 and 16
 * bytes, zero-padded). Versions are Pravega's own (`Version.toString()`); a conditional write is a
 * `Put` at that version, or an `Insert` for "must be absent". "Server CPU" is the standalone JVM's
 * (controller, segment store and ZooKeeper in one process), not the driver's.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { killOnExit, stopChild, waitForExit } from '../core/processes';
import { BatchEntry, JVM_IDLE_CAP_MS, Peer, VersionedValue, repoRoot } from './peer';

/** Request codes and response statuses of the driver's protocol (PravegaDriver.java). */
const OP = { put: 1, get: 2, getVersioned: 3, replace: 4, putBatch: 5, putInFamily: 6, getInFamily: 7, scan: 8, ping: 9, putMany: 10 } as const;
const STATUS = { ok: 0, absent: 1, conflict: 2, error: 3 } as const;

/** A first start downloads ~230 MB with Maven: minutes on a slow network. */
const START_TIMEOUT_MS = 15 * 60_000;
/** How long the driver may take to create its scope and tables. */
const READY_TIMEOUT_MS = 120_000;
/** Every operation's deadline (a peer must fail, never hang the run). */
const CALL_TIMEOUT_MS = 60_000;

/** What a run of scripts/pravega.sh printed. */
interface ScriptResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs scripts/pravega.sh with `args`, bounded by `timeoutMs`. */
function pravegaScript(args: string[], timeoutMs: number): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn('bash', [path.join(repoRoot(), 'scripts', 'pravega.sh'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout: stdout.trim(), stderr: stderr.trim() });
    });
  });
}

function lastLine(r: ScriptResult): string {
  return (r.stderr || r.stdout).split('\n').pop() || `exit ${r.status}`;
}

/** The folder scripts/pravega.sh keeps its files in (KVT_PRAVEGA_HOME). */
function pravegaHome(): string {
  return process.env.KVT_PRAVEGA_HOME ?? path.join(repoRoot(), '.pravega');
}

/** A running standalone Pravega: its controller URI and pid, and whether this process started it. */
export interface PravegaServer {
  readonly controller: string;
  readonly pid: number;
  readonly startedHere: boolean;
  /** Stops the server if this process started it. */
  stop(): Promise<void>;
}

/** Starts the standalone Pravega (scripts/pravega.sh start) unless it already runs. */
export async function startPravega(log: (line: string) => void = () => undefined): Promise<PravegaServer> {
  const already = (await pravegaScript(['status'], 10_000)).status === 0;
  if (!already) {
    log('pravega: starting (scripts/pravega.sh start)…');
    const r = await pravegaScript(['start'], START_TIMEOUT_MS);
    if (r.status !== 0) throw new Error(`scripts/pravega.sh start failed: ${lastLine(r)}`);
    log(r.stdout);
  }
  const pid = Number(fs.readFileSync(path.join(pravegaHome(), 'pravega.pid'), 'utf8').trim());
  return {
    controller: `tcp://127.0.0.1:${process.env.KVT_PRAVEGA_CONTROLLER_PORT ?? '19090'}`,
    pid,
    startedHere: !already,
    async stop() {
      if (!already) await pravegaScript(['stop'], 60_000);
    },
  };
}

/** Builds one request frame: length, id, op, then strings (int16 length) and byte arrays (int32 length). */
class Frame {
  private readonly buf: Buffer;
  private at = 9;

  constructor(id: number, op: number, payloadBytes: number) {
    this.buf = Buffer.allocUnsafe(9 + payloadBytes);
    this.buf.writeUInt32BE(5 + payloadBytes, 0);
    this.buf.writeUInt32BE(id, 4);
    this.buf.writeUInt8(op, 8);
  }

  static strBytes(s: string): number {
    return 2 + Buffer.byteLength(s);
  }

  str(s: string): this {
    const n = this.buf.write(s, this.at + 2, 'utf8');
    this.buf.writeUInt16BE(n, this.at);
    this.at += 2 + n;
    return this;
  }

  int(n: number): this {
    this.buf.writeUInt32BE(n, this.at);
    this.at += 4;
    return this;
  }

  bytes(b: Buffer): this {
    this.buf.writeUInt32BE(b.length, this.at);
    b.copy(this.buf, this.at + 4);
    this.at += 4 + b.length;
    return this;
  }

  done(): Buffer {
    return this.buf;
  }
}

/** One answered request: its status and payload. */
interface Reply {
  status: number;
  payload: Buffer;
}

interface Pending {
  resolve: (r: Reply) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** Options of {@link PravegaPeer.start}. */
export interface PravegaPeerOptions {
  /** Partitions (table segments) of each table. @default 8, as kvt's */
  partitionCount?: number;
  log?: (line: string) => void;
}

/** Pravega's Key-Value Tables through its Java client in a child JVM. */
export class PravegaPeer implements Peer {
  readonly name = 'pravega' as const;
  readonly cpu;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private inbox: Buffer = Buffer.alloc(0);
  private corked = false;
  private stderrTail = '';
  private exited: Error | undefined;

  private constructor(
    private readonly driver: ChildProcess,
    private readonly server: PravegaServer,
  ) {
    this.cpu = { kind: 'pids', pids: () => [server.pid], idleCapMs: JVM_IDLE_CAP_MS } as const;
    driver.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
    driver.stderr!.on('data', (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000)));
    driver.on('exit', (code, signal) => {
      this.exited = new Error(`the Pravega driver exited (${signal ?? code}): ${this.stderrTail.trim().split('\n').pop() ?? ''}`);
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(this.exited);
      }
      this.pending.clear();
    });
  }

  /** Starts the server (unless running), builds and starts the driver, and waits until its tables exist. */
  static async start(options: PravegaPeerOptions = {}): Promise<PravegaPeer> {
    const server = await startPravega(options.log);
    try {
      const cp = await pravegaScript(['driver-classpath'], START_TIMEOUT_MS);
      if (cp.status !== 0) throw new Error(`scripts/pravega.sh driver-classpath failed: ${lastLine(cp)}`);
      const args = ['-Xms256m', '-Xmx512m', '-cp', cp.stdout.split('\n').pop()!, 'kvt.bench.pravega.PravegaDriver'];
      args.push('--controller', server.controller, '--scope', 'bench', '--table', `bench-${Date.now()}`, '--partitions', String(options.partitionCount ?? 8));
      const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
      const driver = killOnExit(spawn(java, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
      const peer = new PravegaPeer(driver, server);
      await peer.ready();
      return peer;
    } catch (err) {
      await server.stop();
      throw err;
    }
  }

  /** Resolves once the driver answered frame 0 (its tables exist). */
  private ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the Pravega driver was not ready within ${READY_TIMEOUT_MS} ms: ${this.stderrTail.trim()}`)), READY_TIMEOUT_MS);
      this.pending.set(0, {
        timer,
        reject,
        resolve: (r) => {
          clearTimeout(timer);
          if (r.status === STATUS.ok) resolve();
          else reject(new Error(`the Pravega driver could not open its tables: ${readString(r.payload, 0)}`));
        },
      });
    });
  }

  private receive(chunk: Buffer): void {
    this.inbox = this.inbox.length === 0 ? chunk : Buffer.concat([this.inbox, chunk]);
    let at = 0;
    while (this.inbox.length - at >= 4) {
      const length = this.inbox.readUInt32BE(at);
      if (this.inbox.length - at - 4 < length) break;
      const id = this.inbox.readUInt32BE(at + 4);
      const reply = { status: this.inbox[at + 8], payload: this.inbox.subarray(at + 9, at + 4 + length) };
      at += 4 + length;
      const p = this.pending.get(id);
      if (!p) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.resolve(reply);
    }
    this.inbox = this.inbox.subarray(at);
  }

  /** Sends one request and resolves its reply; an error status rejects with the driver's message. */
  private call(op: number, payloadBytes: number, fill: (f: Frame) => void): Promise<Reply> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId;
    this.nextId = this.nextId >= 0x7fffffff ? 1 : this.nextId + 1;
    const frame = new Frame(id, op, payloadBytes);
    fill(frame);
    const stdin = this.driver.stdin!;
    // Requests issued in one tick leave in one write.
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    stdin.write(frame.done());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`Pravega did not answer within ${CALL_TIMEOUT_MS} ms`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, {
        timer,
        reject,
        resolve: (r) => (r.status === STATUS.error ? reject(new Error(`Pravega: ${readString(r.payload, 0)}`)) : resolve(r)),
      });
    });
  }

  async put(key: string, value: Buffer): Promise<void> {
    await this.call(OP.put, Frame.strBytes(key) + 4 + value.length, (f) => f.str(key).bytes(value));
  }

  async get(key: string): Promise<Buffer | null> {
    const r = await this.call(OP.get, Frame.strBytes(key), (f) => f.str(key));
    return r.status === STATUS.absent ? null : readBytes(r.payload, 0);
  }

  async getVersioned(key: string): Promise<VersionedValue> {
    const r = await this.call(OP.getVersioned, Frame.strBytes(key), (f) => f.str(key));
    if (r.status === STATUS.absent) return { value: null, version: null };
    const value = readBytes(r.payload, 0);
    return { value, version: readString(r.payload, 4 + value.length) };
  }

  async replaceIf(key: string, value: Buffer, version: string | null): Promise<boolean> {
    const v = version ?? '';
    const r = await this.call(OP.replace, Frame.strBytes(key) + 4 + value.length + Frame.strBytes(v), (f) => f.str(key).bytes(value).str(v));
    return r.status === STATUS.ok;
  }

  async putBatch(family: string, entries: BatchEntry[]): Promise<void> {
    let size = Frame.strBytes(family) + 4;
    for (const e of entries) size += Frame.strBytes(e.key) + 4 + e.value.length;
    await this.call(OP.putBatch, size, (f) => {
      f.str(family).int(entries.length);
      for (const e of entries) f.str(e.key).bytes(e.value);
    });
  }

  /** Loading only: one frame, one update per key in the driver (family-less keys have no atomic multi-key write). */
  async putMany(entries: BatchEntry[]): Promise<void> {
    let size = 4;
    for (const e of entries) size += Frame.strBytes(e.key) + 4 + e.value.length;
    await this.call(OP.putMany, size, (f) => {
      f.int(entries.length);
      for (const e of entries) f.str(e.key).bytes(e.value);
    });
  }

  async putInFamily(family: string, key: string, value: Buffer): Promise<void> {
    await this.call(OP.putInFamily, Frame.strBytes(family) + Frame.strBytes(key) + 4 + value.length, (f) => f.str(family).str(key).bytes(value));
  }

  async getInFamily(family: string, key: string): Promise<Buffer | null> {
    const r = await this.call(OP.getInFamily, Frame.strBytes(family) + Frame.strBytes(key), (f) => f.str(family).str(key));
    return r.status === STATUS.absent ? null : readBytes(r.payload, 0);
  }

  async scanFamily(family: string): Promise<number> {
    const r = await this.call(OP.scan, Frame.strBytes(family), (f) => f.str(family));
    return r.payload.readUInt32BE(0);
  }

  /** One round trip through the driver without Pravega: the pipe's own cost. */
  async ping(): Promise<void> {
    await this.call(OP.ping, 0, () => undefined);
  }

  async close(): Promise<void> {
    if (!this.exited) {
      this.driver.stdin!.end();
      const exited = waitForExit(this.driver);
      const timer = setTimeout(() => void stopChild(this.driver), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await this.server.stop();
  }
}

function readBytes(b: Buffer, at: number): Buffer {
  const n = b.readUInt32BE(at);
  return b.subarray(at + 4, at + 4 + n);
}

function readString(b: Buffer, at: number): string {
  const n = b.readUInt16BE(at);
  return b.toString('utf8', at + 2, at + 2 + n);
}
