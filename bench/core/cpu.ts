/**
 * Server CPU time from /proc/<pid>/stat (utime + stime), so a workload can be charged the
 * CPU-seconds its servers spent. Linux only; elsewhere the figures read as unavailable.
 */
import * as fs from 'node:fs';

/** Clock ticks per second for /proc times; 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) a process has used so far, or undefined when unreadable. */
export function processCpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces or parens: fields are counted after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so utime (field 14) is rest[11] and stime (field 15) rest[12].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return (utime + stime) / CLOCK_TICKS;
}

/** Where a peer's server CPU is read from. */
export type CpuSource =
  | {
      kind: 'pids';
      pids: () => number[];
      /**
       * The longest wait for these processes to go idle, when shorter than the run's: a JVM's
       * background threads (JIT, GC, its own timers) keep it from ever reading as idle, so a longer
       * wait only lengthens the run.
       */
      idleCapMs?: number;
    }
  /** In-process (raw LevelDB): this process's own CPU, which includes the workload driver. */
  | { kind: 'self' };

/** Total CPU seconds of a source now, or undefined when any pid is unreadable. */
export function cpuSecondsOf(source: CpuSource): number | undefined {
  if (source.kind === 'self') {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  }
  let total = 0;
  for (const pid of source.pids()) {
    const s = processCpuSeconds(pid);
    if (s === undefined) return undefined;
    total += s;
  }
  return total;
}

/** Starts measuring; the returned function gives the CPU seconds spent since. */
export function startCpuMeter(source: CpuSource): () => number | undefined {
  const before = cpuSecondsOf(source);
  return () => {
    const after = cpuSecondsOf(source);
    return before === undefined || after === undefined ? undefined : after - before;
  };
}

/** A sample of at most one clock tick (10 ms of CPU in 200 ms, 5% of a core) reads as idle. */
const IDLE_SAMPLE_MS = 200;
const IDLE_TICKS = 1;

/**
 * Whether any thread of the processes of `source` is running or waiting for a CPU (state R in
 * /proc/<pid>/task/<tid>/stat): a server busy with deferred work is, however little CPU a loaded
 * machine gives it (at a load of 13 on 2 cores a burning process got under a tick per sample).
 */
export function anyThreadRunnable(source: CpuSource): boolean {
  if (source.kind === 'self') return false;
  for (const pid of source.pids()) {
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        if (stat[stat.lastIndexOf(')') + 2] === 'R') return true;
      } catch {
        // The thread ended meanwhile.
      }
    }
  }
  return false;
}

/**
 * Waits until the processes of `source` are idle (one sample of {@link IDLE_SAMPLE_MS} with at most
 * one clock tick of CPU, and then no thread runnable) or `maxMs` pass (or their CPU cannot be read). A server's deferred work
 * (LevelDB compactions, etcd's backend commits) then neither lands in the next peer's round nor goes
 * uncharged. In-process sources are not waited for (they hold the benchmark itself).
 */
export async function waitUntilIdle(source: CpuSource, maxMs: number): Promise<void> {
  if (source.kind === 'self') return;
  const deadline = Date.now() + Math.min(maxMs, source.idleCapMs ?? maxMs);
  for (;;) {
    const meter = startCpuMeter(source);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
    const used = meter();
    if (used === undefined || Date.now() >= deadline) return;
    if (Math.round(used * CLOCK_TICKS) <= IDLE_TICKS && !anyThreadRunnable(source)) return;
  }
}
