/**
 * A local kvt cluster of real processes for the benchmark: `node bin/kvt.js controller` and N
 * `node bin/kvt.js segmentstore`, ephemeral ports, temp data dirs, ready when every store has
 * registered. With `profileDir`, each server runs under `--cpu-prof` and writes a .cpuprofile there
 * on its graceful exit.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { nodeFlagsFor } from '../../server-kit/node-flags';
import { parseIntegerFlag } from '../core/flags';
import { killOnExit, LineWatcher, makeTempDir, parseJsonLine, removeDir, stopChild } from '../core/processes';
import { repoRoot } from './peer';

/** Segment stores of the benchmark's cluster unless `--segment-stores` says otherwise (as `npm start`). */
export const DEFAULT_SEGMENT_STORES = 2;
/** Most segment stores `--segment-stores` takes (each is a process on this machine). */
export const MAX_SEGMENT_STORES = 8;

/** The count given to `--segment-stores` (`undefined` when the flag ended the command line). */
export function parseSegmentStores(given: string | undefined): number {
  return parseIntegerFlag('--segment-stores', given, 1, MAX_SEGMENT_STORES);
}

/** Options for {@link startKvtCluster}. */
export interface KvtClusterOptions {
  /** @default DEFAULT_SEGMENT_STORES */
  segmentStores?: number;
  /** Run the servers under `node --cpu-prof --cpu-prof-dir <profileDir>`. */
  profileDir?: string;
  /** @default 30000 */
  readyTimeoutMs?: number;
  /** The kvt checkout whose `bin/kvt.js` (and dist/) runs, e.g. a worktree of the build before (bench/ab.ts). @default this one */
  root?: string;
}

/** A running cluster; `stop()` stops every process (stores first) and removes the data. */
export interface KvtCluster {
  readonly controller: string;
  readonly pids: number[];
  /** pid → "controller" / "segmentstore-<i>". */
  readonly roles: ReadonlyMap<number, string>;
  /** The segment stores' pids, data directories and gRPC addresses (127.0.0.1:port), in store order. */
  readonly stores: readonly { pid: number; dataDir: string; address: string }[];
  stop(): Promise<void>;
}

interface Spawned {
  child: ChildProcess;
  watcher: LineWatcher;
}

function spawnKvt(root: string, args: string[], profileDir?: string): Spawned {
  // Stores run with the node flags `kvt cluster` gives them, so the benchmark measures what users run.
  const nodeArgs = [...nodeFlagsFor(args), ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])];
  const child = killOnExit(spawn(process.execPath, [...nodeArgs, path.join(root, 'bin', 'kvt.js'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }));
  return { child, watcher: new LineWatcher(child, [child.stdout!, child.stderr!]) };
}

async function readyPort(s: Spawned, msg: string, timeoutMs: number): Promise<number> {
  const line = await s.watcher.waitFor((l) => parseJsonLine(l)?.msg === msg, `kvt: "${msg}"`, timeoutMs);
  return Number(parseJsonLine(line)!.port);
}

/** Starts a controller and the segment stores and waits until all stores have registered. */
export async function startKvtCluster(options: KvtClusterOptions = {}): Promise<KvtCluster> {
  const timeoutMs = options.readyTimeoutMs ?? 30_000;
  const checkout = options.root ?? repoRoot();
  const root = makeTempDir('kvt');
  const procs: Spawned[] = [];
  const stop = async (): Promise<void> => {
    // Stores first, then the controller: the reverse of the start order.
    for (const p of [...procs].reverse()) await stopChild(p.child, 10_000);
    removeDir(root);
  };
  try {
    const ctl = spawnKvt(checkout, ['controller', '--port', '0', '--data-dir', path.join(root, 'controller')], options.profileDir);
    procs.push(ctl);
    const controller = `127.0.0.1:${await readyPort(ctl, 'controller started', timeoutMs)}`;
    const dirs: string[] = [];
    for (let i = 0; i < (options.segmentStores ?? DEFAULT_SEGMENT_STORES); i++) {
      const dir = path.join(root, `segmentstore-${i}`);
      dirs.push(dir);
      procs.push(spawnKvt(checkout, ['segmentstore', '--port', '0', '--data-dir', dir, '--controller', controller], options.profileDir));
    }
    const ports: number[] = [];
    for (const s of procs.slice(1)) {
      ports.push(await readyPort(s, 'segment store started', timeoutMs));
      await s.watcher.waitFor((l) => parseJsonLine(l)?.msg === 'registered with controller', 'kvt: registration', timeoutMs);
    }
    const pids = procs.map((p) => p.child.pid!);
    const roles = new Map(pids.map((pid, i) => [pid, i === 0 ? 'controller' : `segmentstore-${i - 1}`] as const));
    const stores = dirs.map((dataDir, i) => ({ pid: pids[i + 1], dataDir, address: `127.0.0.1:${ports[i]}` }));
    return { controller, pids, roles, stores, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
