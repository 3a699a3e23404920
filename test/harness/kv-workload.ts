/**
 * A random workload of the client's operations for the linearizability test: each client (its own
 * factory, so its own connections and coalescer) runs one operation at a time on a few key families
 * of a few keys and on a few family-less keys, so that clients contend. Every operation is recorded
 * for the checker (kv-model.ts) with its invocation and completion times on one monotonic clock and
 * its result: acknowledged with what it read or the versions it wrote; failed on a condition; of
 * unknown outcome (UnavailableError with maybeApplied); or surely not applied (UnavailableError
 * without maybeApplied, or an error the run tolerates, see {@link HistoryRecorder}), which is left out
 * of the history like a read that failed.
 *
 * Values are unique per write and key (`c<client>.<n>.<key>`), so a value names the write that made
 * it. Conditions use versions the client saw; under contention many are stale. Some writes expire
 * ({@link TTLS_MS}), short enough that reads meet keys gone by expiry before the next write.
 */
import { performance } from 'node:perf_hooks';
import { ConditionalTableUpdateError, KeyValueTable, MAX_KEY_FAMILY_LENGTH, TableEntry, TableModification, UnavailableError, Version } from '../../client';
import { KeyRange, KvOp, Mod, Observed, shortName } from './kv-model';
import { guard } from './load';

/**
 * A key family named `tag` padded to MAX_KEY_FAMILY_LENGTH (2,048) bytes, the longest there may be:
 * it travels with every modification and every get key, so it dominates what a call carries.
 */
export function longFamily(tag: string): string {
  return `${tag}-`.padEnd(MAX_KEY_FAMILY_LENGTH, 'x');
}

/** The TTLs of writes that expire, one in {@link TTL_SHARE} (ms). */
const TTLS_MS = [30, 80, 200];
const TTL_SHARE = 0.15;

/** Options of an entry iteration of the workload. */
export interface IterationOptions {
  maxKeysAtOnce: number;
  reverse: boolean;
  prefix?: string;
  from?: string;
  to?: string;
  toInclusive?: boolean;
}

/** The keys of the workload. */
export interface WorkloadKeys {
  families: string[];
  /** The keys of every family. */
  familyKeys: string[];
  /** Family-less keys (each its own group). */
  soloKeys: string[];
}

/** Counts of outcomes, for the test's summary and its sanity checks. */
export interface WorkloadCounts {
  acknowledged: number;
  conditionFailed: number;
  unknown: number;
  notApplied: number;
  readsFailed: number;
  pages: number;
}

/** A failure a run tolerates at some moments only: its call, the call's window and the error, for the test to judge. */
export interface TimedFailure {
  what: string;
  invokedAt: number;
  completedAt: number;
  error: unknown;
}

/** The history of every client of one run, and what went wrong that should not have. */
export class HistoryRecorder {
  readonly ops: KvOp[] = [];
  /** Failures other than a failed condition, UnavailableError or a tolerated one (must stay empty). */
  readonly unexpected: string[] = [];
  /** Failures `tolerates` let through, with their times (the test decides whether each was allowed then). */
  readonly tolerated: TimedFailure[] = [];
  readonly counts: WorkloadCounts = { acknowledged: 0, conditionFailed: 0, unknown: 0, notApplied: 0, readsFailed: 0, pages: 0 };
  private nextId = 0;

  /**
   * @param tolerates errors besides UnavailableError that a run may meet at some moments (a table
   *   deleted under its handles): kept in `tolerated`, not `unexpected`. An update failing so did not
   *   take effect (only an UnavailableError with maybeApplied may leave one applied) and is left out.
   */
  constructor(private readonly tolerates: (err: unknown) => boolean = () => false) {}

  /** An id for the next operation. */
  id(): number {
    return this.nextId++;
  }

  /** Records a failed read or iterator page (invoked at `invokedAt`); UnavailableError and tolerated errors are expected. */
  readFailed(what: string, err: unknown, invokedAt: number): void {
    this.counts.readsFailed++;
    if (this.tolerate(what, err, invokedAt)) return;
    if (!(err instanceof UnavailableError)) this.unexpected.push(`${what}: ${describeError(err)}`);
  }

  /** True (and kept in `tolerated`) when `err` is one the run tolerates. */
  tolerate(what: string, err: unknown, invokedAt: number): boolean {
    if (!this.tolerates(err)) return false;
    this.tolerated.push({ what, invokedAt, completedAt: performance.now(), error: err });
    return true;
  }
}

function describeError(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function observed(entry: TableEntry<string, string> | null): Observed | null {
  return entry ? { key: entry.key, value: entry.value, version: entry.version.toString() } : null;
}

/** The model's form of a condition. */
function conditionText(version: Version | undefined): string | undefined {
  if (version === undefined || version.isNoVersion) return undefined;
  return version.toString();
}

/** One client of the workload. */
export class WorkloadClient {
  private n = 0;
  /** The last version this client saw of each key (`group/key`). */
  private readonly seen = new Map<string, Version>();
  /** Every version this client saw (stale conditions come from here). */
  private readonly history: Version[] = [];

  constructor(
    readonly client: number,
    protected readonly table: KeyValueTable<string, string>,
    protected readonly recorder: HistoryRecorder,
    protected readonly keys: WorkloadKeys,
    protected readonly rand: () => number,
  ) {}

  /** Runs operations until `maxOps` were run or `until()` says so. */
  async run(maxOps: number, until: () => boolean): Promise<void> {
    for (let i = 0; i < maxOps && !until(); i++) await this.step();
  }

  /** Reads every key once, a final observation of the state. */
  async readEverything(): Promise<void> {
    for (const family of this.keys.families) await this.read(family, this.keys.familyKeys, 'getAll');
    for (const key of this.keys.soloKeys) await this.read(null, [key], 'get');
  }

  /** One random operation. */
  async step(): Promise<void> {
    if (this.rand() < 0.2) {
      const key = this.pick(this.keys.soloKeys);
      const r = this.rand();
      if (r < 0.3) return this.read(null, [key], 'get');
      // Family-less keys hash to partitions of their own: one getAll reads several segments.
      if (r < 0.4) return this.read(null, this.some(this.keys.soloKeys, 2 + Math.floor(this.rand() * (this.keys.soloKeys.length - 1))), 'getAll');
      return this.single(null, key, r);
    }
    const family = this.pick(this.keys.families);
    const r = this.rand();
    if (r < 0.15) return this.read(family, [this.pick(this.keys.familyKeys)], 'get');
    if (r < 0.25) return this.read(family, this.some(this.keys.familyKeys, 2 + Math.floor(this.rand() * 2)), 'getAll');
    if (r < 0.33) return this.iterate(family);
    if (r < 0.7) return this.single(family, this.pick(this.keys.familyKeys), this.rand());
    return this.batch(family);
  }

  protected pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)];
  }

  /** `count` distinct items of `items`, in random order. */
  protected some<T>(items: readonly T[], count: number): T[] {
    const rest = [...items];
    const out: T[] = [];
    while (out.length < count && rest.length > 0) out.push(rest.splice(Math.floor(this.rand() * rest.length), 1)[0]);
    return out;
  }

  private group(family: string | null, key: string): string {
    return family ?? `~${key}`;
  }

  /** A new value for `key` (unique: its client, the client's operation number and the key). */
  protected value(key: string): string {
    return `c${this.client}.${++this.n}.${key}`;
  }

  private remember(family: string | null, key: string, version: Version | null | undefined): void {
    if (!version) return;
    this.seen.set(`${this.group(family, key)}/${key}`, version);
    this.history.push(version);
  }

  /** A condition: mostly the version this client last saw of the key, sometimes an older one. */
  protected condition(family: string | null, key: string): Version {
    const last = this.seen.get(`${this.group(family, key)}/${key}`);
    if (last && this.rand() < 0.8) return last;
    if (this.history.length > 0 && this.rand() < 0.7) return this.pick(this.history);
    return Version.NOT_EXISTS;
  }

  /** The version this client last saw of a key, if any. */
  seenVersion(family: string | null, key: string): Version | undefined {
    return this.seen.get(`${this.group(family, key)}/${key}`);
  }

  /**
   * Reads keys of one family (getAll) and records it; family-less keys are groups of their own, so a
   * getAll of several records one read per key, each over the whole call (it is atomic per key only).
   */
  async read(family: string | null, keys: string[], name: 'get' | 'getAll' = 'getAll'): Promise<void> {
    const invokedAt = performance.now();
    let entries: (TableEntry<string, string> | null)[];
    try {
      entries = await guard(this.table.getAll(family, keys), `${name} of ${keys.length} keys`);
    } catch (err) {
      return this.recorder.readFailed(`${name}(${family === null ? null : shortName(family)}, ${keys.length > 8 ? `${keys.length} keys` : keys.join(',')})`, err, invokedAt);
    }
    const completedAt = performance.now();
    entries.forEach((e, i) => this.remember(family, keys[i], e?.version));
    const reads = family === null ? keys.map((key, i) => ({ keys: [key], values: [observed(entries[i])] })) : [{ keys, values: entries.map(observed) }];
    for (const read of reads) {
      this.recorder.ops.push({
        id: this.recorder.id(),
        client: this.client,
        group: this.group(family, read.keys[0]),
        name,
        invokedAt,
        completedAt,
        f: 'read',
        ...read,
      });
    }
  }

  /** A TTL for a write, for one write in TTL_SHARE; else undefined (it never expires). */
  protected ttl(): number | undefined {
    return this.rand() < TTL_SHARE ? this.pick(TTLS_MS) : undefined;
  }

  /** Puts a new value (with `ttlMs`, an expiring one) and records it. */
  put(family: string | null, key: string, ttlMs?: number): Promise<void> {
    const value = this.value(key);
    return this.update(family, 'put', [{ type: 'put', key, value, ttlMs }], () => this.table.put(family, key, value, { ttlMs }).then((v) => [v]));
  }

  /** Replaces a key's value at `version` (with `ttlMs`, by an expiring one) and records it. */
  replace(family: string | null, key: string, version: Version, ttlMs?: number): Promise<void> {
    const value = this.value(key);
    return this.update(family, 'replace', [{ type: 'put', key, value, version: conditionText(version), ttlMs }], () => this.table.replace(family, key, value, version, { ttlMs }).then((v) => [v]));
  }

  /** A single-key update: put, putIfAbsent, replace, or remove with or without a version. */
  protected single(family: string | null, key: string, r: number): Promise<void> {
    if (r < 0.35) return this.put(family, key, this.ttl());
    if (r < 0.5) {
      const value = this.value(key);
      const ttlMs = this.ttl();
      return this.update(family, 'putIfAbsent', [{ type: 'insert', key, value, ttlMs }], () => this.table.putIfAbsent(family, key, value, { ttlMs }).then((v) => [v]));
    }
    if (r < 0.8) return this.replace(family, key, this.condition(family, key), this.ttl());
    const version = r < 0.9 ? undefined : this.condition(family, key);
    return this.update(family, 'remove', [{ type: 'remove', key, version: conditionText(version) }], () => this.table.remove(family, key, version).then(() => [null]));
  }

  /** An atomic batch of one family: putAll, replaceAll, removeAll, or update mixing everything. */
  private batch(family: string): Promise<void> {
    const keys = this.some(this.keys.familyKeys, 1 + Math.floor(this.rand() * 3));
    const r = this.rand();
    if (r < 0.2) {
      const entries = keys.map((k) => [k, this.value(k)] as const);
      const ttlMs = this.ttl();
      return this.update(
        family,
        'putAll',
        entries.map(([key, value]) => ({ type: 'put', key, value, ttlMs })),
        () => this.table.putAll(family, entries, { ttlMs }),
      );
    }
    if (r < 0.4) {
      const entries = keys.map((key) => ({ key, value: this.value(key), version: this.condition(family, key) }));
      return this.update(
        family,
        'replaceAll',
        entries.map((e) => ({ type: 'put', key: e.key, value: e.value, version: conditionText(e.version) })),
        () => this.table.replaceAll(family, entries),
      );
    }
    if (r < 0.5) {
      const entries = keys.map((key) => ({ key, version: this.rand() < 0.5 ? undefined : this.condition(family, key) }));
      return this.update(
        family,
        'removeAll',
        entries.map((e) => ({ type: 'remove', key: e.key, version: conditionText(e.version) })),
        () => this.table.removeAll(family, entries).then(() => entries.map(() => null)),
      );
    }
    const mods: TableModification<string, string>[] = keys.map((key) => this.modification(family, key));
    if (this.rand() < 0.25) mods.splice(Math.floor(this.rand() * (mods.length + 1)), 0, this.rangeRemoval());
    return this.update(family, 'update', mods.map(toModelMod), () => this.table.update(family, mods));
  }

  protected modification(family: string, key: string): TableModification<string, string> {
    const r = this.rand();
    if (r < 0.3) return { type: 'insert', key, value: this.value(key), ttlMs: this.ttl() };
    if (r < 0.5) return { type: 'put', key, value: this.value(key), ttlMs: this.ttl() };
    if (r < 0.8) return { type: 'put', key, value: this.value(key), version: this.condition(family, key), ttlMs: this.ttl() };
    return { type: 'remove', key, version: this.rand() < 0.5 ? undefined : this.condition(family, key) };
  }

  private rangeRemoval(): TableModification<string, string> {
    const r = this.rand();
    if (r < 0.4) return { type: 'removeRange', prefix: this.pick(this.keys.familyKeys).slice(0, 1) };
    const [a, b] = this.some(this.keys.familyKeys, 2).sort();
    return r < 0.7 ? { type: 'removeRange', from: a, to: b } : { type: 'removeRange', from: b };
  }

  /** Runs an update and records it with its outcome. */
  protected async update(family: string | null, name: string, mods: Mod[], call: () => Promise<(Version | null)[]>): Promise<void> {
    const key = (mods.find((m) => m.type !== 'removeRange') as { key: string } | undefined)?.key ?? '';
    const op = { id: this.recorder.id(), client: this.client, group: this.group(family, key), name, invokedAt: performance.now(), f: 'update' as const, mods };
    try {
      const versions = await guard(call(), `${name} of ${shortName(op.group)}`);
      this.recorder.counts.acknowledged++;
      mods.forEach((m, i) => m.type !== 'removeRange' && this.remember(family, m.key, versions[i]));
      this.recorder.ops.push({ ...op, completedAt: performance.now(), outcome: { type: 'ok', versions: versions.map((v) => v?.toString() ?? null) } });
    } catch (err) {
      const completedAt = performance.now();
      if (err instanceof ConditionalTableUpdateError && (err.code === 'BAD_KEY_VERSION' || err.code === 'NO_SUCH_KEY') && (err.index !== undefined || mods.length === 1)) {
        this.recorder.counts.conditionFailed++;
        this.recorder.ops.push({ ...op, completedAt, outcome: { type: 'failed', code: err.code, index: err.index ?? 0 } });
        return;
      }
      if ((err instanceof UnavailableError && !err.maybeApplied) || this.recorder.tolerate(`${name}(${shortName(op.group)})`, err, op.invokedAt)) {
        this.recorder.counts.notApplied++;
        return;
      }
      if (!(err instanceof UnavailableError)) this.recorder.unexpected.push(`${name}(${shortName(op.group)}): ${describeError(err)}`);
      // Unknown outcome (also for an unexpected failure: the history stays sound while the test fails on it).
      this.recorder.counts.unknown++;
      this.recorder.ops.push({ ...op, outcome: { type: 'unknown' } });
    }
  }

  /** An iteration of random options (see {@link iterateWith}). */
  private iterate(family: string): Promise<void> {
    const { options, base } = this.iteratorOptions();
    return this.iterateWith(family, options, base);
  }

  /**
   * An iteration of `family` with `options` (`base`: its range as the model sees it), each page
   * recorded as an observation of its stretch of the range: from the previous page's last key
   * (exclusive) to its own last key, or to the end of the range when it is short (the last page). The
   * end of an iteration that needed one more call to find nothing is recorded over both calls: its
   * (empty) answer may have come with the last page. At most `maxPages` pages are read.
   */
  protected async iterateWith(family: string, options: IterationOptions, base: KeyRange, maxPages = 20): Promise<void> {
    const pages = this.table.entryIterator(family, options)[Symbol.asyncIterator]();
    let after: string | undefined;
    let previousInvokedAt: number | undefined;
    for (let n = 0; n < maxPages; n++) {
      const invokedAt = performance.now();
      let next: IteratorResult<{ items: TableEntry<string, string>[] }>;
      try {
        next = await guard(pages.next(), `page of ${shortName(family)}`);
      } catch (err) {
        return this.recorder.readFailed(`entryIterator(${shortName(family)})`, err, invokedAt);
      }
      const completedAt = performance.now();
      const items = next.done ? [] : next.value.items;
      const last = items.length === options.maxKeysAtOnce ? items[items.length - 1].key : undefined;
      const range = pageRange(base, options.reverse, after, last);
      for (const e of items) this.remember(family, e.key, e.version);
      this.recorder.counts.pages++;
      this.recorder.ops.push({
        id: this.recorder.id(),
        client: this.client,
        group: family,
        name: 'entryIterator',
        invokedAt: next.done ? (previousInvokedAt ?? invokedAt) : invokedAt,
        completedAt,
        f: 'scan',
        range,
        items: items.map((e) => observed(e)!).sort((a, b) => (a.key < b.key ? -1 : 1)),
      });
      if (next.done || last === undefined) return;
      after = last;
      previousInvokedAt = invokedAt;
    }
  }

  private iteratorOptions(): { options: IterationOptions; base: KeyRange } {
    const maxKeysAtOnce = 1 + Math.floor(this.rand() * 3);
    const reverse = this.rand() < 0.5;
    const r = this.rand();
    if (r < 0.5) return { options: { maxKeysAtOnce, reverse }, base: {} };
    if (r < 0.75) {
      const prefix = this.pick(this.keys.familyKeys).slice(0, 1);
      return { options: { maxKeysAtOnce, reverse, prefix }, base: { prefix } };
    }
    const [from, to] = this.some(this.keys.familyKeys, 2).sort();
    const toInclusive = this.rand() < 0.5;
    return { options: { maxKeysAtOnce, reverse, from, to, toInclusive }, base: { lower: { key: from, inclusive: true }, upper: { key: to, inclusive: toInclusive } } };
  }
}

/**
 * The stretch of `base` a page covered: after the previous page's last key (`after`, exclusive) up
 * to its own last key (`last`, inclusive) when it was full, else to the end; in reverse, downwards.
 */
function pageRange(base: KeyRange, reverse: boolean, after: string | undefined, last: string | undefined): KeyRange {
  const range: KeyRange = { ...base };
  const start = after === undefined ? undefined : { key: after, inclusive: false };
  const end = last === undefined ? undefined : { key: last, inclusive: true };
  if (reverse) {
    if (start) range.upper = start;
    if (end) range.lower = end;
  } else {
    if (start) range.lower = start;
    if (end) range.upper = end;
  }
  return range;
}

/** The model's form of a client modification. */
export function toModelMod(m: TableModification<string, string>): Mod {
  switch (m.type) {
    case 'insert':
      return { type: 'insert', key: m.key, value: m.value, ttlMs: m.ttlMs };
    case 'put':
      return { type: 'put', key: m.key, value: m.value, version: conditionText(m.version), ttlMs: m.ttlMs };
    case 'remove':
      return { type: 'remove', key: m.key, version: conditionText(m.version) };
    case 'removeRange': {
      const range: KeyRange = {};
      if (m.prefix !== undefined) range.prefix = m.prefix;
      if (m.from !== undefined) range.lower = { key: m.from, inclusive: true };
      if (m.to !== undefined) range.upper = { key: m.to, inclusive: false };
      return { type: 'removeRange', range };
    }
  }
}
