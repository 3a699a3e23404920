/**
 * Histories of a table deleted and created again under live handles, checked incarnation by
 * incarnation. Each incarnation is a fresh table (empty, its own segments, so its own versions);
 * what a correct history is across a re-creation:
 *
 * - Incarnation i may answer only while it may exist: from its create's invocation to its delete's
 *   return (its *lifetime*). An operation took effect on the incarnation its answer names (a version
 *   names its segment, a segment its incarnation) within both the operation's window and that
 *   lifetime; an answer naming an incarnation whose lifetime the operation does not overlap is a
 *   violation (a handle answering from a table gone, or one not yet made), and so is one naming two
 *   (a scan mixing two tables; one group's read or batch answered by two segments).
 * - An operation whose answer names no incarnation (a read of absent keys, a failed condition, an
 *   acknowledged removal, an unknown outcome) belongs to the one incarnation whose lifetime its window
 *   overlaps; one that overlaps no lifetime must have failed (no table existed). One that overlaps
 *   several (it spanned a delete and the create after it) may have met either: an update is then of
 *   unknown outcome in each (it took effect at most once, which the check does not hold it to), an
 *   observation is not checked.
 * - Each incarnation's history, its groups named `#i group`, must be linearizable from an empty table
 *   (kv-model.ts), every operation's window cut to the lifetime of its incarnation.
 * - A call may fail with TableNotFoundError or TableNotActiveError only when it overlaps a switch:
 *   from a delete's invocation to the next create's return ({@link misplacedFailures}).
 */
import type { KvOp } from './kv-model';
import type { TimedFailure } from './kv-workload';

/** One incarnation of the table, with the times (the history's clock) of its create and delete calls. */
export interface Incarnation {
  index: number;
  partitionCount: number;
  /** Its segments, from the routing read right after its create returned. */
  segments: ReadonlySet<string>;
  createInvokedAt: number;
  createdAt: number;
  /** Undefined while it lives (the last one). */
  deleteInvokedAt?: number;
  deletedAt?: number;
}

/** A history split by incarnation (see the file comment). */
export interface Attribution {
  /** The operations, each in the groups of its incarnation(s), windows cut to their lifetimes. */
  ops: KvOp[];
  violations: string[];
  /** Operations placed by the incarnation their answers named. */
  byAnswer: number;
  /** Operations placed by the one lifetime they overlapped. */
  byTime: number;
  /** Updates overlapping two lifetimes, of unknown outcome in each. */
  eitherUpdates: number;
  /** Observations overlapping two lifetimes, naming neither: not checked. */
  ambiguousObservations: number;
  /** Operations (as placed) per incarnation. */
  perIncarnation: number[];
}

/** The segment of a version's text (`<segment>.<sequence>`). */
function segmentOf(version: string): string {
  return version.slice(0, version.lastIndexOf('.'));
}

/** The versions an operation's answer holds. */
function versionsOf(op: KvOp): string[] {
  switch (op.f) {
    case 'read':
      return op.values.flatMap((v) => (v ? [v.version] : []));
    case 'scan':
      return op.items.map((i) => i.version);
    case 'update':
      return op.outcome.type === 'ok' ? op.outcome.versions.filter((v): v is string => v !== null) : [];
    case 'expire':
      return [];
  }
}

function lifetime(inc: Incarnation): [number, number] {
  return [inc.createInvokedAt, inc.deletedAt ?? Infinity];
}

function overlaps(op: KvOp, [from, to]: [number, number]): boolean {
  return op.invokedAt <= to && (op.completedAt ?? Infinity) >= from;
}

function describe(op: KvOp): string {
  return `#${op.id} c${op.client} ${op.name} of ${op.group.length > 40 ? `${op.group.slice(0, 24)}…` : op.group} [${op.invokedAt.toFixed(1)}..${op.completedAt?.toFixed(1) ?? '?'}]`;
}

/**
 * Splits `history` by incarnation. `sharedAnswer(op)`: versions answered together with `op` that name
 * its incarnation too (a scan's entries: one scan never mixes two tables), if any.
 */
export function attribute(history: readonly KvOp[], incarnations: readonly Incarnation[], sharedAnswer: (op: KvOp) => readonly string[] = () => []): Attribution {
  const out: Attribution = { ops: [], violations: [], byAnswer: 0, byTime: 0, eitherUpdates: 0, ambiguousObservations: 0, perIncarnation: incarnations.map(() => 0) };
  const bySegment = new Map<string, Incarnation>();
  for (const inc of incarnations) for (const s of inc.segments) bySegment.set(s, inc);
  let nextId = history.reduce((n, op) => Math.max(n, op.id), 0) + 1;
  const place = (op: KvOp, inc: Incarnation, id = op.id) => {
    const [from, to] = lifetime(inc);
    const completedAt = op.completedAt === undefined ? undefined : Math.min(op.completedAt, to);
    out.ops.push({ ...op, id, group: `#${inc.index} ${op.group}`, invokedAt: Math.max(op.invokedAt, from), completedAt });
    out.perIncarnation[inc.index]++;
  };
  for (const op of history) {
    const segments = [...new Set([...versionsOf(op), ...sharedAnswer(op)].map(segmentOf))];
    const named = [...new Set(segments.map((s) => bySegment.get(s)))];
    if (named.includes(undefined)) {
      out.violations.push(`${describe(op)} answered with a version of segment ${segments.find((s) => !bySegment.has(s))}, of no incarnation`);
      continue;
    }
    if (named.length > 1) {
      out.violations.push(`${describe(op)} answered from incarnations ${named.map((i) => i!.index).join(' and ')} at once`);
      continue;
    }
    if (named.length === 1) {
      const inc = named[0]!;
      if (!overlaps(op, lifetime(inc))) {
        out.violations.push(
          `${describe(op)} answered from incarnation ${inc.index}, which existed only in [${lifetime(inc)
            .map((t) => t.toFixed(1))
            .join('..')}]`,
        );
        continue;
      }
      place(op, inc);
      out.byAnswer++;
      continue;
    }
    const candidates = incarnations.filter((inc) => overlaps(op, lifetime(inc)));
    if (candidates.length === 1) {
      place(op, candidates[0]);
      out.byTime++;
    } else if (candidates.length === 0) {
      if (op.completedAt !== undefined) out.violations.push(`${describe(op)} was answered while no incarnation of the table existed`);
    } else if (op.f === 'update' && op.outcome.type !== 'failed') {
      // Acknowledged without a version (a removal) or of unknown outcome: it may have met either.
      for (const inc of candidates) place({ ...op, completedAt: undefined, outcome: { type: 'unknown' } }, inc, nextId++);
      out.eitherUpdates++;
    } else {
      out.ambiguousObservations++;
    }
  }
  return out;
}

/**
 * The tolerated failures (TableNotFoundError, TableNotActiveError) of calls that overlap no switch:
 * from a delete's invocation to the return of the create after it (or to the end, after the last delete).
 */
export function misplacedFailures(failures: readonly TimedFailure[], incarnations: readonly Incarnation[]): string[] {
  const switches = incarnations.filter((inc) => inc.deleteInvokedAt !== undefined).map((inc): [number, number] => [inc.deleteInvokedAt!, incarnations[inc.index + 1]?.createdAt ?? Infinity]);
  return failures
    .filter((f) => !switches.some(([from, to]) => f.invokedAt <= to && f.completedAt >= from))
    .map(
      (f) =>
        `${f.what} [${f.invokedAt.toFixed(1)}..${f.completedAt.toFixed(1)}] failed with ${f.error instanceof Error ? `${f.error.name}: ${f.error.message}` : String(f.error)} while the table was ACTIVE throughout`,
    );
}
