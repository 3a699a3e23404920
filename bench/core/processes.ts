/**
 * Small helpers for the peer server processes the benchmark spawns: free ports, temp dirs, waiting
 * for a line of output, and stopping with a grace period. Kept apart from test/harness on purpose
 * (bench code does not import tests).
 */
import { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** Asks the kernel for a free loopback port (closed again before returning, so a tiny race remains). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * What this process started and must not leave behind: children still running and temp dirs not yet
 * removed. The normal path stops and removes them itself; these sets cover an abrupt exit (an uncaught
 * error, `process.exit`), when no async cleanup can run: the 'exit' hook kills and removes what is
 * left, synchronously. Without it an EPIPE on stdout (`npm run bench | head`) left etcd, the kvt
 * controller and the stores running with their data dirs.
 */
const liveChildren = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const child of liveChildren) child.kill('SIGKILL');
    for (const dir of liveDirs) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  });
}

/** Registers `child` to be killed (SIGKILL) if this process exits while it still runs; returns it. */
export function killOnExit<T extends ChildProcess>(child: T): T {
  hookExit();
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

/** Creates a fresh directory under the OS temp dir (removed on exit unless {@link removeDir} did). */
export function makeTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `kvt-bench-${prefix}-`));
  hookExit();
  liveDirs.add(dir);
  return dir;
}

/** Removes a directory tree, ignoring errors (best-effort cleanup). */
export function removeDir(dir: string): void {
  liveDirs.delete(dir);
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Resolves once the child has exited (immediately if it already has). */
export function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child is gone. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = waitForExit(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Collects a child's output lines and lets callers wait for one that matches. */
export class LineWatcher {
  readonly lines: string[] = [];
  private buffered = '';

  constructor(
    private readonly child: ChildProcess,
    streams: NodeJS.ReadableStream[],
  ) {
    for (const s of streams) {
      s.setEncoding('utf8');
      s.on('data', (chunk: string) => this.push(chunk));
    }
  }

  private push(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      this.lines.push(this.buffered.slice(0, nl));
      this.buffered = this.buffered.slice(nl + 1);
      // Bound memory: a long run only needs the recent lines for error messages.
      if (this.lines.length > 2_000) this.lines.splice(0, 1_000);
    }
  }

  /** Resolves with the first line for which `match` is true; rejects on exit or after `timeoutMs`. */
  async waitFor(match: (line: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let seen = 0;
    for (;;) {
      for (; seen < this.lines.length; seen++) if (match(this.lines[seen])) return this.lines[seen];
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`${what}: process exited (${this.child.exitCode ?? this.child.signalCode}): ${this.tail()}`);
      }
      if (Date.now() > deadline) throw new Error(`${what}: timed out after ${timeoutMs} ms: ${this.tail()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The last few lines, for error messages. */
  tail(n = 5): string {
    return this.lines.slice(-n).join(' | ');
  }
}

/** Parses a JSON log line, or returns undefined. */
export function parseJsonLine(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
