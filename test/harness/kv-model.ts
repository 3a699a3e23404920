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
  | { type: 'put'; key: string; value: string; version?: string }
  | { type: 'insert'; key: string; value: string }
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

export type KvOp = ReadOp | ScanOp | UpdateOp;

/** The state of one group: key → value (the write's identity), and the highest version applied. */
export interface KvState {
  entries: ReadonlyMap<string, string>;
  lastSequence: number;
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
    }
  }
  return { entries, lastSequence };
}

function sameEntry(current: string | undefined, read: Observed | null): boolean {
  return read === null ? current === undefined : current === read.value;
}

/** The model of one group given the version facts of the whole history. */
export function kvModel(facts: VersionFacts): Model<KvState, KvOp> {
  return {
    initial: { entries: new Map(), lastSequence: 0 },
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
      }
    },
    // A put of one key whose value nobody saw: only a failed condition can depend on it (a read would
    // have to see its value; a later write either overwrites it or, conditional, could not succeed).
    deferrable(op) {
      if (op.f !== 'update' || op.mods.length !== 1) return false;
      const m = op.mods[0];
      return (m.type === 'put' || m.type === 'insert') && facts.versionOf(m.value) === undefined;
    },
    key(state) {
      const parts = [...state.entries].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`);
      return `${state.lastSequence};${parts.join(';')}`;
    },
  };
}

/** True for reads, iterator pages and failed conditions: operations that change nothing. */
function isObservation(op: KvOp): boolean {
  return op.f !== 'update' || op.outcome.type === 'failed';
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
      return `put ${m.key}=${m.value}${m.version ? ` if ${m.version}` : ''}`;
    case 'insert':
      return `insert ${m.key}=${m.value}`;
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

/** One line per operation: `#id c<client> [invoked..completed ms] name(…) → result`. */
export function describeOp(op: KvOp): string {
  const at = `[${op.invokedAt.toFixed(1)}..${op.completedAt === undefined ? '?' : op.completedAt.toFixed(1)}]`;
  const head = `#${op.id} c${op.client} ${at} ${op.group} ${op.name}`;
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
  }
}

/** The keys an operation touches (a scan or range removal: every key of `universe` in its range). */
export function keysOf(op: KvOp, universe: readonly string[]): string[] {
  if (op.f === 'read') return op.keys;
  if (op.f === 'scan') return universe.filter((k) => inRange(k, op.range));
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
  /** For a violation: the operation that could not be placed, the state there, and a minimized failing history. */
  report?: string;
}

/** The verdict on a whole history: version contradictions, and each group's search. */
export interface KvCheck {
  conflicts: string[];
  groups: GroupVerdict[];
}

/**
 * Checks a history of the client's operations group by group (see the file comment); a violating
 * group's history is minimized for the report.
 */
export function checkKvHistory(history: readonly KvOp[], options: { maxStates?: number } = {}): KvCheck {
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
    const result = checkLinearizable(ops, model, { maxStates: options.maxStates });
    const verdict: GroupVerdict = {
      group, ops: ops.length, unknownOutcomes: ops.filter((o) => o.completedAt === undefined).length,
      verdict: result.verdict, states: result.states, ms: Math.round(performance.now() - started),
    };
    if (result.verdict === 'violation') {
      // A trial that needs a long search counts as passing: the minimized history is only ever smaller.
      const fails = (h: KvOp[]) => checkLinearizable(h, model, { maxStates: MINIMIZE_MAX_STATES }).verdict === 'violation';
      const minimal = minimizeHistory(ops, fails, KV_WEAKENINGS).sort((a, b) => a.invokedAt - b.invokedAt);
      const stuck = result.stuck;
      verdict.report = [
        `${group}: no linearization; stuck at ${describeOp(stuck.op)}`,
        `  state there: ${model.key(stuck.state)}`,
        `  minimized failing history (${minimal.length} of ${ops.length} operations: observations dropped where it still fails); its last ${REPORT_LINES} on the keys of the observations left:`,
        ...relevant(minimal).slice(-REPORT_LINES).map((o) => `    ${describeOp(o)}`),
      ].join('\n');
    }
    groups.push(verdict);
  }
  return { conflicts: facts.conflicts, groups };
}

/** The operations of a minimized history worth reading: the observations left and the updates of their keys. */
function relevant(ops: readonly KvOp[]): KvOp[] {
  const universe = [...new Set(ops.flatMap((o) => (o.f === 'read' ? o.keys : o.f === 'update' ? o.mods.flatMap((m) => (m.type === 'removeRange' ? [] : [m.key])) : o.items.map((i) => i.key))))];
  const keys = new Set(ops.filter(isObservation).flatMap((o) => keysOf(o, universe)));
  return ops.filter((o) => isObservation(o) || keysOf(o, universe).some((k) => keys.has(k)));
}
