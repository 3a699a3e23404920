/**
 * Reads that ran while updates did, checked against an exact model (engine-model.ts), for the segment
 * engine in process.
 *
 * Each checked family has one writer, and the engine stages the updates of one segment in the order
 * they arrive, so the family's states form a chain: s0, then s_k after the writer's k-th update (a
 * failed condition repeats the state before it), whether the writer waits for each update or issues a
 * few at once. A read invoked at t0 and completed at t1 took effect at one moment between them, so
 * what it saw of the family must be s_k for some k from the last update completed before t0 up to the
 * last one invoked before t1 (times on one clock, taken outside the calls: the windows are if anything
 * wider than the truth). That is linearizability for one writer per family and any number of readers,
 * checked read by read (the order of the reads among themselves is not checked).
 *
 * A read of one family (get, getAll, an iterator page) is checked over the keys or the key range it
 * covered. A read of a whole segment (a scan page, a count) is checked family by family over what it
 * covered of each (a count must be a sum of one state's count per family): a necessary condition only,
 * as the families' moments must also be one. Entries compare as `value head:length@sequence`.
 */
import { performance } from 'node:perf_hooks';
import type { SegmentEngine } from '../../segmentstore/storage/segment-engine';
import { entryString, FamilyModel } from './engine-model';

/** One end of a key range (latin1 keys). */
export interface Bound {
  key: string;
  inclusive: boolean;
}

/** What one read saw of one family, or (a count) of several together. */
export type Observation =
  /** Point reads: the entry string of each key, or null when it was not found. */
  | { kind: 'keys'; family: string; keys: string[]; seen: (string | null)[] }
  /** A range read: `key=entry` of every entry it returned within the bounds, ascending. */
  | { kind: 'range'; family: string; lower?: Bound; upper?: Bound; seen: string[] }
  /** A count of the entries (and their key + value bytes) of these families together. */
  | { kind: 'count'; families: string[]; count: number; bytes: number };

/** One read: when it was invoked and completed, and what it saw. */
export interface TimedRead {
  label: string;
  invokedAt: number;
  completedAt: number;
  observations: Observation[];
}

/** The sorted `key=entry` list and totals of one state, computed once. */
interface StateView {
  keys: string[];
  items: string[];
  count: number;
  bytes: number;
}

/** The states of one family with one writer, and when each update was invoked and completed. */
export class FamilyChain {
  /** s0, s1, …: the model after each update. */
  readonly states: FamilyModel[];
  private readonly invoked: number[] = [];
  private readonly completed: (number | undefined)[] = [];
  private readonly labels: string[] = [];
  private readonly views = new Map<FamilyModel, StateView>();

  constructor(
    readonly family: string,
    initial: FamilyModel,
  ) {
    this.states = [initial];
  }

  /** The state after the last update issued. */
  get current(): FamilyModel {
    return this.states[this.states.length - 1];
  }

  /** Updates issued so far. */
  get length(): number {
    return this.states.length - 1;
  }

  /**
   * Records the invocation (now: `at`) of the writer's next update, whose outcome in the model is
   * `after` (null: its condition fails, the state stays); returns its number, for {@link complete}.
   */
  issue(label: string, after: FamilyModel | null, at: number): number {
    this.states.push(after ?? this.current);
    this.invoked.push(at);
    this.completed.push(undefined);
    this.labels.push(label);
    return this.states.length - 1;
  }

  /** Records that update `k` completed at `at`. */
  complete(k: number, at: number): void {
    this.completed[k - 1] = at;
  }

  /** The states a read invoked at `t0` and completed at `t1` may have seen: s_lo … s_hi. */
  window(t0: number, t1: number): [number, number] {
    let lo = 0;
    let hi = 0;
    for (let k = 1; k < this.states.length; k++) {
      const done = this.completed[k - 1];
      if (done !== undefined && done < t0) lo = k;
      if (this.invoked[k - 1] <= t1) hi = k;
    }
    return [lo, Math.max(lo, hi)];
  }

  /** Label of update `k` (`update k: …`). */
  label(k: number): string {
    return k === 0 ? 'no update' : `update ${k}: ${this.labels[k - 1]}`;
  }

  view(k: number): StateView {
    const state = this.states[k];
    let v = this.views.get(state);
    if (!v) {
      const sorted = [...state.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      let bytes = 0;
      for (const [key, e] of sorted) bytes += key.length + e.value.length;
      v = { keys: sorted.map(([key]) => key), items: sorted.map(([key, e]) => `${key}=${entryString(e.value, e.sequence)}`), count: sorted.length, bytes };
      this.views.set(state, v);
    }
    return v;
  }
}

function aboveLower(key: string, lower: Bound | undefined): boolean {
  return !lower || key > lower.key || (key === lower.key && lower.inclusive);
}

function belowUpper(key: string, upper: Bound | undefined): boolean {
  return !upper || key < upper.key || (key === upper.key && upper.inclusive);
}

/** The `key=entry` items of state `k` of `chain` within the bounds. */
function rangeOf(chain: FamilyChain, k: number, lower: Bound | undefined, upper: Bound | undefined): string[] {
  const v = chain.view(k);
  const out: string[] = [];
  // (Families are a few hundred keys: a linear pass is cheap enough.)
  for (let i = 0; i < v.keys.length; i++) if (aboveLower(v.keys[i], lower) && belowUpper(v.keys[i], upper)) out.push(v.items[i]);
  return out;
}

function entryOf(state: FamilyModel, key: string): string | null {
  const e = state.get(key);
  return e ? entryString(e.value, e.sequence) : null;
}

function sameList(a: readonly (string | null)[], b: readonly (string | null)[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const short = (list: readonly string[], n = 12): string => (list.length <= n ? list.join(' ') : `${list.slice(0, n).join(' ')} … (${list.length})`);
const keyOf = (item: string): string => item.slice(0, item.indexOf('='));

/**
 * Why a range read matches no state of s_lo … s_hi: keys every state has and the read lacks, entries
 * no state has, and updates of the window the read shows part of.
 */
function explainRange(chain: FamilyChain, o: Extract<Observation, { kind: 'range' }>, lo: number, hi: number): string {
  const seen = new Set(o.seen);
  const candidates = Array.from({ length: hi - lo + 1 }, (_, i) => new Set(rangeOf(chain, lo + i, o.lower, o.upper)));
  const seenKeys = new Set(o.seen.map(keyOf));
  const everyState = [...candidates[0]].map(keyOf).filter((k) => candidates.every((c) => [...c].some((item) => keyOf(item) === k)));
  const missing = everyState.filter((k) => !seenKeys.has(k));
  const unknown = o.seen.filter((item) => !candidates.some((c) => c.has(item)));
  const parts = [`saw ${o.seen.length} entries; s${lo}…s${hi} hold ${candidates.map((c) => c.size).join(',')}`];
  if (missing.length > 0) parts.push(`missing ${missing.length} keys that every one of those states holds: ${short(missing)}`);
  if (unknown.length > 0) parts.push(`${unknown.length} entries none of them holds: ${short(unknown, 6)}`);
  if (new Set(o.seen.map(keyOf)).size !== o.seen.length) parts.push('a key returned twice');
  for (let k = lo + 1; k <= hi; k++) {
    const before = candidates[k - 1 - lo];
    const after = candidates[k - lo];
    const changed = [...after].filter((item) => !before.has(item));
    const shown = changed.filter((item) => seen.has(item)).length;
    if (shown > 0 && shown < changed.length) parts.push(`${chain.label(k)} wrote ${changed.length} entries in the range; the read shows ${shown} of them`);
  }
  return parts.join('; ');
}

/** Two keys of a point read that only different states of s_lo … s_hi hold as read, with those states. */
function splitKeys(chain: FamilyChain, o: Extract<Observation, { kind: 'keys' }>, lo: number, hi: number): string {
  const states = (i: number): number[] => Array.from({ length: hi - lo + 1 }, (_, j) => lo + j).filter((k) => entryOf(chain.states[k], o.keys[i]) === o.seen[i]);
  const span = (ks: number[]): string => (ks.length === 1 ? `s${ks[0]}` : `s${ks[0]}…s${ks[ks.length - 1]}`);
  for (let i = 0; i < o.keys.length; i++) {
    for (let j = i + 1; j < o.keys.length; j++) {
      const a = states(i);
      const b = states(j);
      if (a.some((k) => b.includes(k))) continue;
      return `${o.keys[i]} ${o.seen[i] ?? 'absent'} as in ${span(a)}, ${o.keys[j]} ${o.seen[j] ?? 'absent'} as in ${span(b)}`;
    }
  }
  return 'no two keys disagree, but no state holds them all';
}

/** Checks one observation of a read over [t0, t1]; a description of the violation, or undefined. */
function checkObservation(chains: ReadonlyMap<string, FamilyChain>, o: Observation, t0: number, t1: number): string | undefined {
  if (o.kind === 'count') {
    // The sums of one state's (count, bytes) per family.
    let sums = new Set<string>(['0,0']);
    const windows: string[] = [];
    for (const family of o.families) {
      const chain = chains.get(family)!;
      const [lo, hi] = chain.window(t0, t1);
      windows.push(`${family}: s${lo}…s${hi}`);
      const next = new Set<string>();
      for (const sum of sums) {
        const [c, b] = sum.split(',').map(Number);
        for (let k = lo; k <= hi; k++) next.add(`${c + chain.view(k).count},${b + chain.view(k).bytes}`);
      }
      sums = next;
    }
    if (sums.has(`${o.count},${o.bytes}`)) return undefined;
    const counts = [...new Set([...sums].map((s) => Number(s.split(',')[0])))].sort((a, b) => a - b);
    return `counted ${o.count} entries (${o.bytes} bytes); the states it may have seen (${windows.join(', ')}) hold ${short(counts.map(String))}`;
  }
  const chain = chains.get(o.family);
  if (!chain) return `family '${o.family}' has no writer`;
  const [lo, hi] = chain.window(t0, t1);
  if (o.kind === 'keys') {
    for (let k = lo; k <= hi; k++)
      if (
        sameList(
          o.keys.map((key) => entryOf(chain.states[k], key)),
          o.seen,
        )
      )
        return undefined;
    const diffs = o.keys.flatMap((key, i) => {
      const allowed = new Set<string | null>();
      for (let k = lo; k <= hi; k++) allowed.add(entryOf(chain.states[k], key));
      return allowed.has(o.seen[i]) ? [] : [`${key}: read ${o.seen[i] ?? 'absent'}, s${lo}…s${hi} hold ${[...allowed].map((a) => a ?? 'absent').join(' | ')}`];
    });
    const what = diffs.length > 0 ? `: ${diffs.slice(0, 4).join('; ')}` : ` (each key as in some state, but no one state all of them: ${splitKeys(chain, o, lo, hi)})`;
    return `fam '${o.family}': no state of s${lo}…s${hi} has what it read${what}; s${lo} is after ${chain.label(lo)}`;
  }
  for (let k = lo; k <= hi; k++) if (sameList(rangeOf(chain, k, o.lower, o.upper), o.seen)) return undefined;
  const range = `${o.lower ? `${o.lower.inclusive ? '[' : '('}${o.lower.key}` : '(-'}..${o.upper ? `${o.upper.key}${o.upper.inclusive ? ']' : ')'}` : '+)'}`;
  return `fam '${o.family}' ${range}: ${explainRange(chain, o, lo, hi)}; s${lo} is after ${chain.label(lo)}`;
}

/** Checks every read against the chains; one line per violation. */
export function checkReads(reads: readonly TimedRead[], chains: ReadonlyMap<string, FamilyChain>): string[] {
  const problems: string[] = [];
  for (const r of reads) {
    for (const o of r.observations) {
      const problem = checkObservation(chains, o, r.invokedAt, r.completedAt);
      if (problem) problems.push(`${r.label}: ${problem}`);
    }
  }
  return problems;
}

/** Where {@link randomRead} reads: one segment whose checked families are `families`, keys `keys`. */
export interface ReadScope {
  segmentId: string;
  /** The segment's families, in storage order (every one of them checked: scans and counts cover them all). */
  families: readonly string[];
  keys: readonly string[];
}

const latin1 = (b: Uint8Array): string => Buffer.from(b).toString('latin1');
const now = (): number => performance.now();

/** Records a read as it ends; `problems` gets what is wrong with an answer on its own (order). */
class ReadLog {
  constructor(
    readonly reads: TimedRead[],
    readonly problems: string[],
  ) {}

  add(label: string, invokedAt: number, observations: Observation[]): void {
    this.reads.push({ label, invokedAt, completedAt: now(), observations });
  }

  /** Checks that `keys` strictly ascend (descend with `reverse`). */
  ordered(label: string, keys: readonly string[], reverse: boolean): void {
    for (let i = 1; i < keys.length; i++) {
      if (reverse ? keys[i] < keys[i - 1] : keys[i] > keys[i - 1]) continue;
      this.problems.push(`${label}: keys out of order or repeated: ${keys[i - 1]} then ${keys[i]}`);
      return;
    }
  }
}

/**
 * Iterates one family in pages (forward or reverse, from its start or from a random key), each page
 * recorded as a read of the stretch it covered: after the previous page's last key up to its own last
 * key, or to the end of the family when it is the last page.
 */
async function iteratePages(engine: SegmentEngine, scope: ReadScope, log: ReadLog, rand: () => number, label: string): Promise<void> {
  const family = scope.families[Math.floor(rand() * scope.families.length)];
  const reverse = rand() < 0.5;
  let after = rand() < 0.6 ? scope.keys[Math.floor(rand() * scope.keys.length)] : undefined;
  const maxItems = 3 + Math.floor(rand() * 40);
  for (let page = 0; page < 4; page++) {
    const invokedAt = now();
    const res = await engine.iterate({
      segmentId: scope.segmentId,
      family,
      includeValues: true,
      maxItems,
      reverse,
      hasAfter: after !== undefined,
      ...(after !== undefined ? { after: Buffer.from(after, 'latin1') } : {}),
    });
    const items = res.items.map((e) => [latin1(e.key), `${latin1(e.key)}=${entryString(latin1(e.value), e.sequence)}`] as const);
    const what = `${label} iterate '${family}' ${reverse ? 'reverse' : 'forward'} page ${page} after ${after ?? '(start)'}`;
    log.ordered(
      what,
      items.map(([k]) => k),
      reverse,
    );
    const last = !res.done && items.length > 0 ? items[items.length - 1][0] : undefined;
    const start = after === undefined ? undefined : { key: after, inclusive: false };
    const end = last === undefined ? undefined : { key: last, inclusive: true };
    const seen = items.map(([, item]) => item);
    if (reverse) seen.reverse();
    log.add(what, invokedAt, [{ kind: 'range', family, lower: reverse ? end : start, upper: reverse ? start : end, seen }]);
    if (last === undefined) return;
    after = last;
  }
}

/** Point reads: one key, several keys of one family, or keys of every family in one Get. */
async function getKeys(engine: SegmentEngine, scope: ReadScope, log: ReadLog, rand: () => number, label: string): Promise<void> {
  const r = rand();
  const count = r < 0.4 ? 1 : 2 + Math.floor(rand() * 40);
  const mixed = r > 0.85;
  const pairs = new Map<string, [string, string]>();
  const family = scope.families[Math.floor(rand() * scope.families.length)];
  for (let i = 0; i < count; i++) {
    const f = mixed ? scope.families[Math.floor(rand() * scope.families.length)] : family;
    const k = scope.keys[Math.floor(rand() * scope.keys.length)];
    pairs.set(`${f}/${k}`, [f, k]);
  }
  const list = [...pairs.values()];
  const invokedAt = now();
  const res = await engine.get({ segmentId: scope.segmentId, keys: list.map(([f, k]) => ({ family: f, key: Buffer.from(k, 'latin1') })) });
  const byFamily = new Map<string, { keys: string[]; seen: (string | null)[] }>();
  list.forEach(([f, k], i) => {
    const e = res.entries[i];
    const o = byFamily.get(f) ?? { keys: [], seen: [] };
    byFamily.set(f, o);
    o.keys.push(k);
    o.seen.push(e?.found ? entryString(latin1(e.value), e.sequence) : null);
  });
  log.add(
    `${label} get of ${list.length} keys`,
    invokedAt,
    [...byFamily].map(([f, o]): Observation => ({ kind: 'keys', family: f, ...o })),
  );
}

/**
 * Scans the segment in pages, each recorded family by family over the stretch of storage order it
 * covered (after the previous page's last item, up to its own last, or to the end).
 */
async function scanPages(engine: SegmentEngine, scope: ReadScope, log: ReadLog, rand: () => number, label: string): Promise<void> {
  const maxItems = 10 + Math.floor(rand() * 150);
  const order = (f: string): number => scope.families.indexOf(f);
  let position: Buffer = Buffer.alloc(0);
  let start: [number, string] | undefined;
  for (let page = 0; page < 8; page++) {
    const invokedAt = now();
    const res = await engine.scan({ segmentId: scope.segmentId, includeValues: true, maxItems, after: position });
    const what = `${label} scan page ${page}`;
    const items = res.items.map((i) => ({ at: [order(i.family), latin1(i.key)] as [number, string], item: `${latin1(i.key)}=${entryString(latin1(i.value), i.sequence)}` }));
    log.ordered(
      what,
      items.map((i) => `${String(i.at[0]).padStart(3, '0')}/${i.at[1]}`),
      false,
    );
    if (items.some((i) => i.at[0] < 0)) log.problems.push(`${what}: an item of a family nobody wrote`);
    const end = !res.done && items.length > 0 ? items[items.length - 1].at : undefined;
    const observations: Observation[] = [];
    scope.families.forEach((family, f) => {
      if ((start && start[0] > f) || (end && end[0] < f)) return;
      const lower = start && start[0] === f ? { key: start[1], inclusive: false } : undefined;
      const upper = end && end[0] === f ? { key: end[1], inclusive: true } : undefined;
      observations.push({ kind: 'range', family, lower, upper, seen: items.filter((i) => i.at[0] === f).map((i) => i.item) });
    });
    log.add(what, invokedAt, observations);
    if (end === undefined) return;
    start = end;
    position = Buffer.from(res.position);
  }
}

/** The segment's count and bytes (segmentInfo), over all its families. */
async function countSegment(engine: SegmentEngine, scope: ReadScope, log: ReadLog, label: string): Promise<void> {
  const invokedAt = now();
  const info = await engine.segmentInfo(scope.segmentId);
  log.add(`${label} count`, invokedAt, [{ kind: 'count', families: [...scope.families], count: Number(info.entryCount), bytes: Number(info.bytes) }]);
}

/**
 * One random read of `scope` (of `kind`, else any), recorded into `reads` (what is wrong with an
 * answer on its own, such as keys out of order, into `problems`): iterator pages either way, gets,
 * scan pages or a count.
 */
export async function randomRead(engine: SegmentEngine, scope: ReadScope, reads: TimedRead[], problems: string[], rand: () => number, label: string, kind?: ReadKind): Promise<void> {
  const log = new ReadLog(reads, problems);
  const r = rand();
  const k = kind ?? (r < 0.45 ? 'iterate' : r < 0.65 ? 'get' : r < 0.87 ? 'scan' : 'count');
  if (k === 'iterate') return iteratePages(engine, scope, log, rand, label);
  if (k === 'get') return getKeys(engine, scope, log, rand, label);
  if (k === 'scan') return scanPages(engine, scope, log, rand, label);
  return countSegment(engine, scope, log, label);
}

/** The kinds of {@link randomRead}. */
export type ReadKind = 'iterate' | 'get' | 'scan' | 'count';
