/**
 * The sequential model of a versioned key-value map, for checking histories of the client's
 * operations with the linearizability checker (linearizability.ts), one group at a time: a key family
 * (its keys together, since an atomic batch spans them) or one family-less key.
 *
 * Values are unique per write (the workload makes each one from the client, an operation number and
 * the key), so a value names the write that made it. Versions are opaque, but the history tells which
 * write got which version: the answer of an acknowledged write, or a read that returned its value.
 * These facts ({@link VersionFacts}) are gathered from the whole history first; a write seen with two
 * versions, or two writes with one version, is a violation by itself (a write applied twice, a version
 * handed out twice). With them the model decides conditions exactly: a condition on version E holds
 * when the key's current value is the one E was seen with. Versions of one segment strictly increase
 * in the order writes are applied, so a write whose version is known must come after every write with
 * a lower one: the model keeps the highest version applied.
 *
 * Expiry: a put or insert with `ttlMs` is live until the store's clock passes the moment it was
 * applied plus `ttlMs`, and that moment lies within the write's invocation and completion. So each
 * such write gets an expiry in the history ({@link ExpireOp}, made by {@link withExpiries}): an
 * operation of its own, invoked `ttlMs` after the write was and completed `ttlMs` after it was (give
 * or take a slack for the two clocks), that removes the key if it still holds the write's value. The
 * search places it like any other operation, so every read must agree with some moment of expiry;
 * a write of unknown outcome gets an expiry of unknown outcome.
 */
import { checkLinearizable, minimizeHistory, Model, TimedOperation, Weakenings } from './linearizability';

/** An entry as read: key, value and version (`"<segment>.<sequence>"`). */
export interface Observed {
  key: string;
  value: string;
  version: string;
}

/** Key bounds of a scan or a range removal (all optional; an omitted bound is open). */
export interface KeyRange {
  prefix?: string;
  lower?: { key: string; inclusive: boolean };
  upper?: { key: string; inclusive: boolean };
}

/**
 * One modification of an update. `version`: the version the key must have (its text), `NOT_EXISTS`,
 * or undefined for none.
 */
export type Mod =
  | { type: 'put'; key: string; value: string; version?: string; ttlMs?: number }
  | { type: 'insert'; key: string; value: string; ttlMs?: number }
  | { type: 'remove'; key: string; version?: string }
  | { type: 'removeRange'; range: KeyRange };

/** The codes of a failed condition: the update did not happen. */
export type ConditionCode = 'BAD_KEY_VERSION' | 'NO_SUCH_KEY';

interface Common extends TimedOperation {
  /** Unique in the history (for reports). */
  id: number;
  client: number;
  /** The group the operation belongs to: a key family, or `~key` for a family-less key. */
  group: string;
  /** The client call, for reports: get, getAll, replace, update, … */
  name: string;
}

/** Point reads (get, getAll) of keys of one group: null for an absent key. Always completed. */
export interface ReadOp extends Common {
  f: 'read';
  keys: string[];
  values: (Observed | null)[];
}

/** One iterator page: exactly the entries of `range`, in key order. Always completed. */
export interface ScanOp extends Common {
  f: 'scan';
  range: KeyRange;
  items: Observed[];
}

/**
 * An atomic update of one group: acknowledged ('ok', with the version of each put and insert and
 * null for removals), failed on a condition (the update did not happen), or of unknown outcome
 * ('unknown', no completion time).
 */
export interface UpdateOp extends Common {
  f: 'update';
  mods: Mod[];
  outcome: { type: 'ok'; versions: (string | null)[] } | { type: 'failed'; code: ConditionCode; index: number } | { type: 'unknown' };
}

/**
 * The expiry of a write with a TTL (see the file comment): `key` loses `value` if it still holds it.
 * Made by the checker, never recorded; completed when the write was acknowledged.
 */
export interface ExpireOp extends Common {
  f: 'expire';
  key: string;
  value: string;
}

export type KvOp = ReadOp | ScanOp | UpdateOp | ExpireOp;

/**
 * The state of one group: key → value (the write's identity), the highest version applied, and the
 * values written with a TTL whose expiry has not been placed yet (an expiry comes after its write).
 */
export interface KvState {
  entries: ReadonlyMap<string, string>;
  lastSequence: number;
  expiring: ReadonlySet<string>;
}

/** True when `key` lies within `range`. Keys compare as JavaScript strings (the tests use ASCII). */
export function inRange(key: string, range: KeyRange): boolean {
  if (range.prefix && !key.startsWith(range.prefix)) return false;
  const { lower, upper } = range;
  if (lower && (key < lower.key || (key === lower.key && !lower.inclusive))) return false;
  if (upper && (key > upper.key || (key === upper.key && !upper.inclusive))) return false;
  return true;
}

function sequenceOf(version: string): number {
  return Number(version.slice(version.indexOf('.') + 1));
}

/** Which write (value) got which version, from every answer of a history. */
export class VersionFacts {
  /** value → its version, and the operation that first showed it. */
  private readonly versionOfValue = new Map<string, { version: string; op: KvOp }>();
  private readonly valueOfVersion = new Map<string, { value: string; op: KvOp }>();
  /** Contradictions: a value seen with two versions, a version seen with two values (violations). */
  readonly conflicts: string[] = [];

  constructor(history: readonly KvOp[]) {
    for (const op of history) {
      const seen = (value: string, version: string) => this.add(value, version, op);
      if (op.f === 'read') for (const o of op.values) if (o) seen(o.value, o.version);
      if (op.f === 'scan') for (const o of op.items) seen(o.value, o.version);
      if (op.f === 'update' && op.outcome.type === 'ok') {
        const versions = op.outcome.versions;
        op.mods.forEach((m, i) => {
          if ((m.type === 'put' || m.type === 'insert') && versions[i]) seen(m.value, versions[i]!);
        });
      }
    }
  }

  private add(value: string, version: string, op: KvOp): void {
    const had = this.versionOfValue.get(value);
    if (had === undefined) this.versionOfValue.set(value, { version, op });
    else if (had.version !== version) this.conflicts.push(`value ${value} seen with version ${had.version} by ${describeOp(had.op)}\n  and with version ${version} by ${describeOp(op)}`);
    const owner = this.valueOfVersion.get(version);
    if (owner === undefined) this.valueOfVersion.set(version, { value, op });
    else if (owner.value !== value) this.conflicts.push(`version ${version} seen with value ${owner.value} by ${describeOp(owner.op)}\n  and with value ${value} by ${describeOp(op)}`);
  }

  /** The version the write of `value` got, when the history shows it. */
  versionOf(value: string): string | undefined {
    return this.versionOfValue.get(value)?.version;
  }
}

/**
 * Whether modification `m`'s condition holds when the key's current value is `current` (undefined:
 * absent): null when it holds, else the code of its failure.
 */
function conditionFailure(m: Mod, current: string | undefined, facts: VersionFacts): ConditionCode | null {
  if (m.type === 'removeRange') return null;
  if (m.type === 'insert' || m.version === 'NOT_EXISTS') return current === undefined ? null : 'BAD_KEY_VERSION';
  if (m.version === undefined) return null;
  if (current === undefined) return 'NO_SUCH_KEY';
  // The version was seen with some write; it holds when that write's value is the current one.
  return facts.versionOf(current) === m.version ? null : 'BAD_KEY_VERSION';
}

/** `mods` applied to `state` in order, or undefined when a known version does not increase. */
function applyMods(state: KvState, mods: readonly Mod[], facts: VersionFacts): KvState | undefined {
  const entries = new Map(state.entries);
  let lastSequence = state.lastSequence;
  let expiring = state.expiring;
  for (const m of mods) {
    if (m.type === 'removeRange') {
      for (const key of [...entries.keys()]) if (inRange(key, m.range)) entries.delete(key);
    } else if (m.type === 'remove') {
      entries.delete(m.key);
    } else {
      const version = facts.versionOf(m.value);
      if (version !== undefined) {
        const sequence = sequenceOf(version);
        if (sequence <= lastSequence) return undefined;
        lastSequence = sequence;
      }
      entries.set(m.key, m.value);
      if (m.ttlMs !== undefined) expiring = new Set(expiring).add(m.value);
    }
  }
  return { entries, lastSequence, expiring };
}

/** The state after `op`'s expiry, or undefined while its write has not been applied. */
function expire(state: KvState, op: ExpireOp): KvState | undefined {
  if (!state.expiring.has(op.value)) return undefined;
  const expiring = new Set(state.expiring);
  expiring.delete(op.value);
  if (state.entries.get(op.key) !== op.value) return { ...state, expiring };
  const entries = new Map(state.entries);
  entries.delete(op.key);
  return { ...state, entries, expiring };
}

function sameEntry(current: string | undefined, read: Observed | null): boolean {
  return read === null ? current === undefined : current === read.value;
}

/** The model of one group given the version facts of the whole history. */
export function kvModel(facts: VersionFacts): Model<KvState, KvOp> {
  return {
    initial: { entries: new Map(), lastSequence: 0, expiring: new Set() },
    step(state, op) {
      switch (op.f) {
        case 'read':
          return op.keys.every((k, i) => sameEntry(state.entries.get(k), op.values[i])) ? state : undefined;
        case 'scan': {
          const inside = [...state.entries].filter(([k]) => inRange(k, op.range)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
          const same = inside.length === op.items.length && inside.every(([k, v], i) => op.items[i].key === k && op.items[i].value === v);
          return same ? state : undefined;
        }
        case 'update': {
          const failures = op.mods.map((m) => conditionFailure(m, m.type === 'removeRange' ? undefined : state.entries.get(m.key), facts));
          if (op.outcome.type === 'failed') return failures[op.outcome.index] === op.outcome.code ? state : undefined;
          if (failures.some((f) => f !== null)) return undefined;
          return applyMods(state, op.mods, facts);
        }
        case 'expire':
          return expire(state, op);
      }
    },
    // A put of one key whose value nobody saw: only a failed condition can depend on it (a read would
    // have to see its value; a later write either overwrites it or, conditional, could not succeed).
    // Not one with a TTL: its expiry can leave the key absent, which a read may need. Nor one
    // conditional on a version: the value it needs can expire before the condition that depends on
    // the put comes, and then the put could no longer be placed there.
    deferrable(op) {
      if (op.f !== 'update' || op.mods.length !== 1) return false;
      const m = op.mods[0];
      if (m.type === 'put' && m.version !== undefined && m.version !== 'NOT_EXISTS') return false;
      return (m.type === 'put' || m.type === 'insert') && m.ttlMs === undefined && facts.versionOf(m.value) === undefined;
    },
    key(state) {
      const parts = [...state.entries].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`);
      return `${state.lastSequence};${parts.join(';')}|${[...state.expiring].sort().join(';')}`;
    },
  };
}

/** True for reads, iterator pages and failed conditions: operations that change nothing. */
function isObservation(op: KvOp): boolean {
  return op.f === 'read' || op.f === 'scan' || (op.f === 'update' && op.outcome.type === 'failed');
}

/**
 * `history` with the expiry of every write with a TTL that may have been applied (acknowledged, or
 * of unknown outcome), from `ttlMs` after the write's invocation to `ttlMs` after its completion,
 * each widened by `slackMs` for the store's clock against the history's.
 */
export function withExpiries(history: readonly KvOp[], slackMs: number): KvOp[] {
  const out = [...history];
  let id = history.reduce((n, op) => Math.max(n, op.id), 0);
  for (const op of history) {
    for (const m of expiringWrites(op)) {
      const completedAt = op.completedAt === undefined ? undefined : op.completedAt + m.ttlMs + slackMs;
      out.push({ id: ++id, client: op.client, group: op.group, name: `expiry of #${op.id}`, invokedAt: op.invokedAt + m.ttlMs - slackMs, completedAt, f: 'expire', key: m.key, value: m.value });
    }
  }
  return out;
}

/** The writes with a TTL of `op` that may have been applied (an update acknowledged or of unknown outcome). */
function expiringWrites(op: KvOp): (Mod & { type: 'put' | 'insert'; ttlMs: number })[] {
  if (op.f !== 'update' || op.outcome.type === 'failed') return [];
  return op.mods.filter((m): m is Mod & { type: 'put' | 'insert'; ttlMs: number } => (m.type === 'put' || m.type === 'insert') && m.ttlMs !== undefined);
}

/**
 * How minimizeHistory may weaken a history of this model: an unfinished update is of unknown
 * outcome, an unfinished observation is dropped; observations may be dropped. (Acknowledged updates
 * could also become unknown outcomes, but many of those make every trial search long.)
 */
export const KV_WEAKENINGS: Weakenings<KvOp> = {
  unfinished: (op) => (isObservation(op) ? null : { ...op, completedAt: undefined, outcome: { type: 'unknown' } }),
  weaken: (op) => (isObservation(op) ? null : undefined),
};

function describeMod(m: Mod): string {
  switch (m.type) {
    case 'put':
      return `put ${m.key}=${m.value}${m.version ? ` if ${m.version}` : ''}${m.ttlMs !== undefined ? ` ttl ${m.ttlMs}` : ''}`;
    case 'insert':
      return `insert ${m.key}=${m.value}${m.ttlMs !== undefined ? ` ttl ${m.ttlMs}` : ''}`;
    case 'remove':
      return `remove ${m.key}${m.version ? ` if ${m.version}` : ''}`;
    case 'removeRange':
      return `removeRange ${describeRange(m.range)}`;
  }
}

function describeRange(r: KeyRange): string {
  const lower = r.lower ? `${r.lower.inclusive ? '[' : '('}${r.lower.key}` : '(-';
  const upper = r.upper ? `${r.upper.key}${r.upper.inclusive ? ']' : ')'}` : '+)';
  return `${r.prefix ? `prefix ${r.prefix} ` : ''}${lower}..${upper}`;
}

function describeObserved(o: Observed | null): string {
  return o ? `${o.key}=${o.value}@${o.version}` : 'absent';
}

/** A name as reports show it: a long one (a key family of up to 2,048 bytes) cut to its start and length. */
export function shortName(name: string): string {
  return name.length <= 40 ? name : `${name.slice(0, 24)}…(${Buffer.byteLength(name)} bytes)`;
}

/** One line per operation: `#id c<client> [invoked..completed ms] name(…) → result`. */
export function describeOp(op: KvOp): string {
  const at = `[${op.invokedAt.toFixed(1)}..${op.completedAt === undefined ? '?' : op.completedAt.toFixed(1)}]`;
  const head = `#${op.id} c${op.client} ${at} ${shortName(op.group)} ${op.name}`;
  switch (op.f) {
    case 'read':
      return `${head}(${op.keys.join(',')}) → ${op.values.map(describeObserved).join(', ')}`;
    case 'scan':
      return `${head}(${describeRange(op.range)}) → [${op.items.map(describeObserved).join(', ')}]`;
    case 'update': {
      const o = op.outcome;
      const result = o.type === 'ok' ? `ok ${o.versions.map((v) => v ?? '-').join(',')}` : o.type === 'failed' ? `${o.code} at ${o.index}` : 'unknown outcome';
      return `${head}(${op.mods.map(describeMod).join('; ')}) → ${result}`;
    }
    case 'expire':
      return `${head}(${op.key}=${op.value})`;
  }
}

/** The keys an operation touches (a scan or range removal: every key of `universe` in its range). */
export function keysOf(op: KvOp, universe: readonly string[]): string[] {
  if (op.f === 'read') return op.keys;
  if (op.f === 'scan') return universe.filter((k) => inRange(k, op.range));
  if (op.f === 'expire') return [op.key];
  return op.mods.flatMap((m) => (m.type === 'removeRange' ? universe.filter((k) => inRange(k, m.range)) : [m.key]));
}

/** The search budget of each trial while minimizing a violation. */
const MINIMIZE_MAX_STATES = 20_000;
/** Operations of a minimized history shown in a report (the last ones). */
const REPORT_LINES = 40;

/** What {@link checkKvHistory} found in one group. */
export interface GroupVerdict {
  group: string;
  ops: number;
  unknownOutcomes: number;
  verdict: 'linearizable' | 'violation' | 'unknown';
  states: number;
  ms: number;
  /** Expiries of writes with a TTL added to the group's history. */
  expiries: number;
  /** For a violation: the operation that could not be placed, the state there, and a minimized failing history. */
  report?: string;
}

/** The verdict on a whole history: version contradictions, and each group's search. */
export interface KvCheck {
  conflicts: string[];
  groups: GroupVerdict[];
}

/** Options of {@link checkKvHistory}. */
export interface KvCheckOptions {
  maxStates?: number;
  /** How far the store's clock may be off the history's, for expiries (withExpiries). @default 10 */
  ttlSlackMs?: number;
}

/**
 * Checks a history of the client's operations group by group (see the file comment), with the
 * expiries of its writes with a TTL; a violating group's history is minimized for the report.
 */
export function checkKvHistory(history: readonly KvOp[], options: KvCheckOptions = {}): KvCheck {
  const slackMs = options.ttlSlackMs ?? 10;
  const facts = new VersionFacts(history);
  const model = kvModel(facts);
  const byGroup = new Map<string, KvOp[]>();
  for (const op of history) {
    const list = byGroup.get(op.group);
    if (list) list.push(op);
    else byGroup.set(op.group, [op]);
  }
  const groups: GroupVerdict[] = [];
  for (const [group, ops] of [...byGroup].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const started = performance.now();
    const checked = withExpiries(ops, slackMs);
    const result = checkLinearizable(checked, model, { maxStates: options.maxStates });
    const verdict: GroupVerdict = {
      group,
      ops: ops.length,
      unknownOutcomes: ops.filter((o) => o.completedAt === undefined).length,
      verdict: result.verdict,
      states: result.states,
      ms: Math.round(performance.now() - started),
      expiries: checked.length - ops.length,
    };
    if (result.verdict === 'violation') {
      // A trial that needs a long search counts as passing: the minimized history is only ever smaller.
      const fails = (h: KvOp[]) => checkLinearizable(withExpiries(h, slackMs), model, { maxStates: MINIMIZE_MAX_STATES }).verdict === 'violation';
      const minimal = minimizeHistory(ops, fails, KV_WEAKENINGS).sort((a, b) => a.invokedAt - b.invokedAt);
      const stuck = result.stuck;
      verdict.report = [
        `${shortName(group)}: no linearization; stuck at ${describeOp(stuck.op)}`,
        `  state there: ${model.key(stuck.state)}`,
        `  minimized failing history (${minimal.length} of ${ops.length} operations: observations dropped where it still fails); its last ${REPORT_LINES} on the keys of the observations left:`,
        ...relevant(minimal)
          .slice(-REPORT_LINES)
          .map((o) => `    ${describeOp(o)}`),
      ].join('\n');
    }
    groups.push(verdict);
  }
  return { conflicts: facts.conflicts, groups };
}

/**
 * The groups whose history is linearizable only with its expiries: where reads saw keys gone by
 * expiry (without them, no linearization exists). A search that needs more than `maxStates` counts as
 * not observing it.
 */
export function groupsObservingExpiry(history: readonly KvOp[], maxStates = 100_000): string[] {
  const model = kvModel(new VersionFacts(history));
  const groups = [...new Set(history.map((op) => op.group))];
  return groups.filter((group) => {
    const ops = history.filter((op) => op.group === group);
    if (!ops.some((op) => expiringWrites(op).length > 0)) return false;
    return checkLinearizable(ops, model, { maxStates }).verdict === 'violation';
  });
}

/** The operations of a minimized history worth reading: the observations left and the updates of their keys. */
function relevant(ops: readonly KvOp[]): KvOp[] {
  const universe = [
    ...new Set(
      ops.flatMap((o) => (o.f === 'read' ? o.keys : o.f === 'update' ? o.mods.flatMap((m) => (m.type === 'removeRange' ? [] : [m.key])) : o.f === 'expire' ? [o.key] : o.items.map((i) => i.key))),
    ),
  ];
  const keys = new Set(ops.filter(isObservation).flatMap((o) => keysOf(o, universe)));
  return ops.filter((o) => isObservation(o) || keysOf(o, universe).some((k) => keys.has(k)));
}
