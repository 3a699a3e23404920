/**
 * The two load shapes: a closed loop of N callers (each issues its next operation when the last one
 * finished) and a fixed-rate open loop whose latencies are measured from each operation's intended
 * start, which corrects coordinated omission. Both are bounded in operations AND time. Time is read
 * from the global `performance`, which tests can fake.
 */
import { LatencyHistogram, newLatencyHistogram, recordMs } from './latency';
import { seededRandom } from './keys';

/** One operation; resolves to how many units (entries, successes…) it accounts for. */
export type Operation = (caller: number, rand: () => number) => Promise<number>;

/** Bounds and shape of a closed loop. */
export interface ClosedLoopOptions {
  concurrency: number;
  /** Measured operations at most (all callers together). */
  maxOps: number;
  /** Measured time at most. */
  maxMs: number;
  /** Unmeasured warm-up time before the measured phase, in the same loop (no pause between them). @default 0 */
  warmupMs?: number;
  /** Give up after this many failed operations (warm-up included). @default 100 */
  maxErrors?: number;
  seed?: number;
  /** Called as the measured window opens and as it closes, e.g. to read CPU meters and counters there. */
  window?: { opened(): void; closed(): void };
}

/** What a run measured. */
export interface RunResult {
  /** Operations completed in the measured window (a closed loop) or at all (a fixed rate). */
  ops: number;
  units: number;
  /**
   * Every operation completed, those of the warm-up and the ones in flight when the window closed
   * included: the work a server's CPU over the whole run paid for.
   */
  completed: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
  histogram: LatencyHistogram;
}

class RunState {
  ops = 0;
  units = 0;
  completed = 0;
  errors = 0;
  firstError?: string;
  measuring = false;
  stopped = false;
  /** The measured window (closed loop): from `open()` to the first `stop()` after it. */
  start = 0;
  end?: number;
  readonly histogram = newLatencyHistogram();

  constructor(private readonly window?: ClosedLoopOptions['window']) {}

  open(): void {
    this.measuring = true;
    this.start = performance.now();
    this.window?.opened();
  }

  stop(): void {
    this.stopped = true;
    if (!this.measuring) return;
    this.measuring = false;
    this.end = performance.now();
    this.window?.closed();
  }

  fail(err: unknown, maxErrors: number): void {
    this.errors++;
    this.firstError ??= err instanceof Error ? err.message : String(err);
    if (this.errors >= maxErrors) this.stop();
  }
}

async function caller(index: number, op: Operation, state: RunState, opts: ClosedLoopOptions): Promise<void> {
  const rand = seededRandom((opts.seed ?? 1) * 1_000_003 + index);
  while (!state.stopped) {
    const t0 = performance.now();
    try {
      const units = await op(index, rand);
      state.completed++;
      // An operation counts when it completes within the window, wherever it started: the callers are
      // busy from the window's first moment to its last, so completions over the window's length is the
      // steady rate. (Counting those that start in it, and waiting for the last of them, stretched the
      // window by about one latency with nothing to count: ~L/T too slow, most for the slowest peer.)
      if (state.measuring) {
        recordMs(state.histogram, performance.now() - t0);
        state.units += units;
        if (++state.ops >= opts.maxOps) state.stop();
      }
    } catch (err) {
      state.fail(err, opts.maxErrors ?? 100);
    }
  }
}

/**
 * Runs `op` from `concurrency` callers: `warmupMs` unmeasured, then measured until `maxOps` operations
 * or `maxMs` elapse; the operations still in flight then finish outside the window.
 */
export async function runClosedLoop(op: Operation, opts: ClosedLoopOptions): Promise<RunResult> {
  const state = new RunState(opts.window);
  const callers = Array.from({ length: opts.concurrency }, (_, i) => caller(i, op, state, opts));
  await new Promise((r) => setTimeout(r, opts.warmupMs ?? 0));
  if (!state.stopped) state.open();
  const timer = setTimeout(() => state.stop(), opts.maxMs);
  await Promise.all(callers);
  clearTimeout(timer);
  const elapsedMs = state.end === undefined ? 0 : state.end - state.start;
  const { ops, units, completed, errors, firstError, histogram } = state;
  return { ops, units, completed, errors, firstError, elapsedMs, histogram };
}

/** Bounds and shape of a fixed-rate run. */
export interface FixedRateOptions {
  /** Intended operations per second. */
  rate: number;
  durationMs: number;
  /** Never more than this many in flight; later starts wait (and their wait counts as latency). */
  maxOutstanding?: number;
  maxErrors?: number;
  seed?: number;
}

/**
 * Issues operation i at start + i/rate regardless of how earlier ones fared, and records each
 * latency from that intended start (not from when it was actually sent), so a stall shows up in
 * the latencies of every operation it delayed rather than vanishing.
 */
export async function runFixedRate(op: Operation, opts: FixedRateOptions): Promise<RunResult> {
  const state = new RunState();
  const rand = seededRandom(opts.seed ?? 7);
  const total = Math.floor((opts.rate * opts.durationMs) / 1000);
  const maxOutstanding = opts.maxOutstanding ?? 10_000;
  const inflight = new Set<Promise<void>>();
  state.measuring = true;
  const start = performance.now();
  let issued = 0;
  while (issued < total && !state.stopped) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * opts.rate) / 1000) + 1);
    while (issued < due && inflight.size < maxOutstanding) {
      const intended = start + (issued * 1000) / opts.rate;
      const p: Promise<void> = op(issued % 1024, rand)
        .then(
          (units) => {
            recordMs(state.histogram, performance.now() - intended);
            state.ops++;
            state.completed++;
            state.units += units;
          },
          (err) => state.fail(err, opts.maxErrors ?? 100),
        )
        .finally(() => inflight.delete(p));
      inflight.add(p);
      issued++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  // Bounded drain: whatever has not finished 30 s after the schedule ended counts as an error.
  await Promise.race([Promise.all(inflight), new Promise((r) => setTimeout(r, 30_000))]);
  state.errors += inflight.size;
  const elapsedMs = performance.now() - start;
  const { ops, units, completed, errors, firstError, histogram } = state;
  return { ops, units, completed, errors, firstError, elapsedMs, histogram };
}
