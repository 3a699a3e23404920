/**
 * A linearizability checker: Wing & Gong's search with Lowe's memoization (WGL, as in Knossos and
 * Porcupine), written for the tests' histories.
 *
 * A history is a set of operations, each with the time it was invoked and the time it completed
 * (one monotonic clock). An operation of unknown outcome has no completion time: it may take effect
 * at any point after its invocation, or never (Jepsen's `:info`). The history is linearizable when
 * some order of its operations (every completed one, and any subset of the unknown ones) respects
 * real time — an operation that completed before another was invoked comes first — and, applied one
 * by one to the sequential model from its initial state, gives every completed operation exactly
 * the result it recorded.
 *
 * The search: the history becomes a list of call and return entries in time order. At each step the
 * candidates are the calls before the first return (operations that may take effect now); one that
 * the model accepts is taken out of the list (linearized) and the search goes on, else the next is
 * tried; when none is left the last choice is undone. A configuration (the operations linearized,
 * the model's state) that was already explored is not explored again, which keeps the search
 * polynomial in practice. Unknown outcomes are tried after the completed candidates: an operation
 * nobody saw is best left out.
 */

/** What the checker needs of an operation; the rest (its call and result) is the model's business. */
export interface TimedOperation {
  /** When it was invoked. */
  invokedAt: number;
  /** When its result came back; undefined for an unknown outcome (it may take effect later, or never). */
  completedAt?: number;
}

/** A sequential model of the system, to replay operations against. */
export interface Model<S, O> {
  readonly initial: S;
  /**
   * The state after `op` takes effect in `state`, or undefined when it cannot: a completed operation
   * could not have returned its result in `state`; one of unknown outcome could not have taken effect
   * (leaving it out is the search's other option).
   */
  step(state: S, op: O): S | undefined;
  /** A string that identifies a state (equal states, equal strings). */
  key(state: S): string;
  /**
   * Optional: true for an operation of unknown outcome that, whenever some linearization takes it,
   * could as well take effect right before the first operation whose result depends on it (or not at
   * all): nothing observes its effect directly. The search then takes it only where it makes a
   * candidate possible that was not, instead of at every point after its invocation.
   */
  deferrable?(op: O): boolean;
}

/** Where the search got furthest when it failed: the operation that could not be placed. */
export interface Stuck<S, O> {
  /** The completed operation whose return was reached before it could be linearized. */
  op: O;
  /** Operations linearized on the way there, in order. */
  linearized: O[];
  /** The model's state there. */
  state: S;
  /** The candidates at that point, none of which the model accepted (or all led to dead ends). */
  candidates: O[];
}

/** The verdict on a history. */
export type CheckResult<S, O> = { verdict: 'linearizable'; states: number } | { verdict: 'violation'; states: number; stuck: Stuck<S, O> } | { verdict: 'unknown'; states: number };

/** Options of {@link checkLinearizable}. */
export interface CheckOptions {
  /** Distinct configurations explored before giving up with verdict 'unknown'. @default 1,000,000 */
  maxStates?: number;
}

/** One frame of the depth-first search: the candidates at one configuration. */
interface Frame<S> {
  candidates: number[];
  next: number;
  /** The operation linearized to get here (-1 at the root), and the state before it. */
  op: number;
  before: S;
}

/**
 * Checks `history` against `model`. Operations are compared by time only (their order in the array
 * does not matter); at equal times an invocation counts as before a completion (the operations
 * overlap).
 */
export function checkLinearizable<S, O extends TimedOperation>(history: readonly O[], model: Model<S, O>, options: CheckOptions = {}): CheckResult<S, O> {
  return new Search(history, model, options.maxStates ?? 1_000_000).run();
}

class Search<S, O extends TimedOperation> {
  /** Operations in invocation order. */
  private readonly ops: O[];
  private readonly known: boolean[];
  private readonly deferrable: boolean[];
  /** The entry list: entry 2i is the call of op i, 2i+1 its return; `head` is the sentinel. */
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly head: number;
  private readonly linearized: Uint8Array;
  /** Linearized operations of unknown outcome, in the order taken (a stack). */
  private readonly unknownTaken: number[] = [];
  /** The first completed operation not linearized (all completed ones before it are). */
  private lowest = 0;
  private completedLeft = 0;
  /**
   * Explored configurations: (completed operations linearized, model state) → the sets of unknown
   * outcomes taken with them. A configuration is dominated by one with the same key and fewer unknown
   * outcomes taken (whatever it can still do, that one can too, by leaving them out), so it is not
   * explored again; with them tried last, most unknown outcomes are never taken at all.
   */
  private readonly seen = new Map<string, number[][]>();
  private states = 0;
  private deepest: { count: number; stuck?: Stuck<S, O> } = { count: -1 };

  constructor(
    history: readonly O[],
    private readonly model: Model<S, O>,
    private readonly maxStates: number,
  ) {
    this.ops = [...history].sort((a, b) => a.invokedAt - b.invokedAt);
    this.known = this.ops.map((o) => o.completedAt !== undefined);
    this.deferrable = this.ops.map((o) => o.completedAt === undefined && (model.deferrable?.(o) ?? false));
    const n = this.ops.length;
    const entries = Array.from({ length: 2 * n }, (_, e) => e);
    const time = (e: number) => (e % 2 === 0 ? this.ops[e >> 1].invokedAt : (this.ops[e >> 1].completedAt ?? Infinity));
    // Calls before returns at equal times; unknown outcomes return after everything.
    entries.sort((a, b) => time(a) - time(b) || (a % 2) - (b % 2) || a - b);
    this.head = 2 * n;
    this.next = new Int32Array(2 * n + 1).fill(-1);
    this.prev = new Int32Array(2 * n + 1).fill(-1);
    let last = this.head;
    for (const e of entries) {
      this.next[last] = e;
      this.prev[e] = last;
      last = e;
    }
    this.linearized = new Uint8Array(n);
    this.completedLeft = this.known.filter(Boolean).length;
    this.advanceLowest();
  }

  run(): CheckResult<S, O> {
    let state = this.model.initial;
    const frames: Frame<S>[] = [{ candidates: this.candidates(), next: 0, op: -1, before: state }];
    for (;;) {
      if (this.completedLeft === 0) return { verdict: 'linearizable', states: this.states };
      const frame = frames[frames.length - 1];
      if (frame.next === frame.candidates.length) {
        this.noteDeadEnd(frames, state);
        if (frame.op < 0) return { verdict: 'violation', states: this.states, stuck: this.deepest.stuck! };
        frames.pop();
        this.undo(frame.op);
        state = frame.before;
        continue;
      }
      const op = frame.candidates[frame.next++];
      const after = this.model.step(state, this.ops[op]);
      if (after === undefined || (this.deferrable[op] && !this.enablesCandidate(frame.candidates, state, after))) continue;
      this.take(op);
      if (!this.firstVisit(`${this.configuration()}#${this.model.key(after)}`)) {
        this.undo(op);
        continue;
      }
      if (this.states > this.maxStates) return { verdict: 'unknown', states: this.states };
      frames.push({ candidates: this.candidates(), next: 0, op, before: state });
      state = after;
    }
  }

  /** Calls before the first return in the list: completed operations first, then unknown ones. */
  private candidates(): number[] {
    const completed: number[] = [];
    const unknown: number[] = [];
    for (let e = this.next[this.head]; e >= 0 && e % 2 === 0; e = this.next[e]) {
      const op = e >> 1;
      (this.known[op] ? completed : unknown).push(op);
    }
    for (const op of unknown) completed.push(op);
    return completed;
  }

  /** True when some completed candidate can take effect in `after` but not in `state`. */
  private enablesCandidate(candidates: readonly number[], state: S, after: S): boolean {
    return candidates.some((c) => this.known[c] && this.model.step(state, this.ops[c]) === undefined && this.model.step(after, this.ops[c]) !== undefined);
  }

  /** Linearizes `op`: takes its entries out of the list. */
  private take(op: number): void {
    for (const e of [2 * op, 2 * op + 1]) {
      this.next[this.prev[e]] = this.next[e];
      if (this.next[e] >= 0) this.prev[this.next[e]] = this.prev[e];
    }
    this.linearized[op] = 1;
    if (this.known[op]) {
      this.completedLeft--;
      if (op === this.lowest) this.advanceLowest();
    } else {
      this.unknownTaken.push(op);
    }
  }

  /** Undoes the last {@link take} (entries go back in the reverse order of their removal). */
  private undo(op: number): void {
    for (const e of [2 * op + 1, 2 * op]) {
      this.next[this.prev[e]] = e;
      if (this.next[e] >= 0) this.prev[this.next[e]] = e;
    }
    this.linearized[op] = 0;
    if (this.known[op]) {
      this.completedLeft++;
      if (op < this.lowest) this.lowest = op;
    } else {
      this.unknownTaken.pop();
    }
  }

  private advanceLowest(): void {
    while (this.lowest < this.ops.length && (this.linearized[this.lowest] || !this.known[this.lowest])) this.lowest++;
  }

  /**
   * The completed operations linearized, exactly and briefly: every one before `lowest` is, and those
   * after it that are can only have been invoked before it completed.
   */
  private configuration(): string {
    const parts: number[] = [this.lowest];
    const until = this.ops[this.lowest]?.completedAt ?? Infinity;
    for (let i = this.lowest + 1; i < this.ops.length && this.ops[i].invokedAt <= until; i++) {
      if (this.linearized[i] && this.known[i]) parts.push(i);
    }
    return parts.join(',');
  }

  /** Records the configuration `key` with the unknown outcomes taken now; false when one it dominates was seen. */
  private firstVisit(key: string): boolean {
    const taken = [...this.unknownTaken].sort((a, b) => a - b);
    const sets = this.seen.get(key);
    if (sets?.some((s) => isSubset(s, taken))) return false;
    if (sets) sets.push(taken);
    else this.seen.set(key, [taken]);
    this.states++;
    return true;
  }

  /** Remembers the dead end where the most completed operations were linearized (for the report). */
  private noteDeadEnd(frames: Frame<S>[], state: S): void {
    const count = this.known.length - this.completedLeft;
    if (count <= this.deepest.count) return;
    let e = this.next[this.head];
    while (e >= 0 && e % 2 === 0) e = this.next[e];
    if (e < 0) return;
    const linearized = frames.slice(1).map((f) => this.ops[f.op]);
    const candidates = frames[frames.length - 1].candidates.map((op) => this.ops[op]);
    this.deepest = { count, stuck: { op: this.ops[e >> 1], linearized, state, candidates } };
  }
}

/** True when sorted `small` is a subset of sorted `large`. */
function isSubset(small: readonly number[], large: readonly number[]): boolean {
  if (small.length > large.length) return false;
  let j = 0;
  for (const x of small) {
    while (j < large.length && large[j] < x) j++;
    if (j === large.length || large[j] !== x) return false;
    j++;
  }
  return true;
}

/** How minimizeHistory may weaken operations. */
export interface Weakenings<O> {
  /** The operation as it stands at a time before it completed (null: drop it, for an observation). */
  unfinished(op: O): O | null;
  /** A weaker form of the operation (null: drop it; undefined: it has none). */
  weaken(op: O): O | null | undefined;
}

/**
 * The shortest failing prefix of a non-linearizable history, then a smaller history that still
 * fails, made only by weakening it (such as dropping observations: operations that change nothing,
 * like reads and failed conditions): weakening cannot make a linearizable history fail, so what
 * remains shows a real violation. `fails` checks a candidate.
 *
 * The prefix at time t is the history as it stood at t: the operations invoked before t, those not
 * completed by then as `unfinished`. It fails from some t on, found by bisection over the
 * completion times; then chunks of halving size are weakened, each kept when the history still fails
 * (delta debugging).
 */
export function minimizeHistory<O extends TimedOperation>(history: readonly O[], fails: (h: O[]) => boolean, how: Weakenings<O>): O[] {
  const times = [...new Set(history.flatMap((o) => (o.completedAt === undefined ? [] : [o.completedAt])))].sort((a, b) => a - b);
  const prefix = (t: number): O[] =>
    history
      .filter((o) => o.invokedAt < t)
      .flatMap((o) => {
        if (o.completedAt === undefined || o.completedAt <= t) return [o];
        const pending = how.unfinished(o);
        return pending === null ? [] : [pending];
      });
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (fails(prefix(times[mid]))) hi = mid;
    else lo = mid + 1;
  }
  let current = times.length > 0 ? prefix(times[lo]) : [...history];
  for (let size = Math.max(1, current.length >> 1); ; size >>= 1) {
    for (let from = current.length - 1; from >= 0; from -= size) {
      const trial: O[] = [];
      let changed = false;
      current.forEach((o, i) => {
        if (i <= from - size || i > from) return void trial.push(o);
        const weak = how.weaken(o);
        if (weak !== undefined) changed = true;
        if (weak !== null) trial.push(weak ?? o);
      });
      if (changed && fails(trial)) current = trial;
    }
    if (size === 1) return current;
  }
}
