/**
 * A mixed write load for fault tests, bounded in operations and time. Each writer owns its key
 * families (so the oracle knows the exact order of every key's writes) and mixes single-key puts,
 * removes, conditional replaces / inserts, and atomic batches over a family of its own. Every outcome
 * goes to a {@link WriteOracle}; every call is guarded so a hang fails the test instead of stalling it.
 */
import { ConditionalTableUpdateError, KeyValueTable, UnavailableError, Version } from '../../client';
import { mulberry32, WriteOracle } from './oracle';

/** One operation's outcome. */
export interface OpRecord {
  writer: number;
  family: string;
  kind: 'put' | 'remove' | 'conditional' | 'batch';
  startedAt: number;
  endedAt: number;
  ok: boolean;
  error?: unknown;
}

/** Keys written by batches: each batch writes all of them with one value, so any mix means a partial batch. */
export const BATCH_KEYS = ['b0', 'b1', 'b2', 'b3'];
const SINGLE_KEYS = ['k0', 'k1', 'k2', 'k3'];
/** A call that has not settled after this long is a hang (every call has a much shorter deadline). */
const HANG_GUARD_MS = 30_000;

/** The families a writer owns. */
export function familiesOf(writer: number): { single: string; batch: string } {
  return { single: `w${writer}-s`, batch: `w${writer}-b` };
}

/** The oracle key of (family, key). */
export function oracleKey(family: string | null, key: string): string {
  return `${family ?? ''}/${key}`;
}

/** `promise`, or a rejection naming `what` as a hang once it has not settled for HANG_GUARD_MS. */
export function guard<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${HANG_GUARD_MS} ms (a hang)`)), HANG_GUARD_MS);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

/** A mixed load of `writers` writers on one table, recording into `oracle`. */
export class MixedLoad {
  private readonly random: (() => number)[];
  private readonly counters: number[];
  /** Operations finished so far, by all writers (for tests that act once the load is under way). */
  finished = 0;

  constructor(
    readonly tables: KeyValueTable<string, string>[],
    readonly oracle: WriteOracle,
    readonly writers: number,
    seed: number,
  ) {
    this.random = Array.from({ length: writers }, (_, w) => mulberry32(seed * 1000 + w));
    this.counters = new Array(writers).fill(0);
  }

  /** Runs every writer until it did `maxOps` operations or `durationMs` passed (or `stop()` says so). */
  async run(maxOps: number, durationMs: number, stop: () => boolean = () => false): Promise<OpRecord[]> {
    const end = Date.now() + durationMs;
    const records: OpRecord[][] = await Promise.all(
      Array.from({ length: this.writers }, async (_, w) => {
        const mine: OpRecord[] = [];
        for (let i = 0; i < maxOps && Date.now() < end && !stop(); i++) {
          mine.push(await this.step(w));
          this.finished++;
        }
        return mine;
      }),
    );
    return records.flat();
  }

  /** One operation of writer `w`. */
  async step(w: number): Promise<OpRecord> {
    const r = this.random[w]();
    const table = this.tables[w % this.tables.length];
    const { single, batch } = familiesOf(w);
    const value = `w${w}:${++this.counters[w]}`;
    const startedAt = Date.now();
    const done = (family: string, kind: OpRecord['kind'], error?: unknown): OpRecord => ({ writer: w, family, kind, startedAt, endedAt: Date.now(), ok: error === undefined, error });
    if (r < 0.45) {
      const key = SINGLE_KEYS[Math.floor(this.random[w]() * SINGLE_KEYS.length)];
      const error = await this.write([oracleKey(single, key)], value, () => table.put(single, key, value).then((v) => [v]));
      return done(single, 'put', error);
    }
    if (r < 0.5) {
      const key = SINGLE_KEYS[Math.floor(this.random[w]() * SINGLE_KEYS.length)];
      const error = await this.write([oracleKey(single, key)], null, () => table.remove(single, key).then(() => [null]));
      return done(single, 'remove', error);
    }
    if (r < 0.75) {
      const keys = BATCH_KEYS.map((k) => oracleKey(batch, k));
      const error = await this.write(keys, value, () =>
        table.putAll(
          batch,
          BATCH_KEYS.map((k) => [k, value] as const),
        ),
      );
      return done(batch, 'batch', error);
    }
    return done(single, 'conditional', await this.conditional(table, single, value));
  }

  /** A replace at the version the oracle knows (an insert when none), resolving conflicts by reading back. */
  private async conditional(table: KeyValueTable<string, string>, family: string, value: string): Promise<unknown> {
    const key = oracleKey(family, 'c');
    const known = this.oracle.versionOf(key);
    const error = await this.write([key], value, () => (known ? table.replace(family, 'c', value, known) : table.putIfAbsent(family, 'c', value)).then((v) => [v]));
    if (!(error instanceof ConditionalTableUpdateError)) return error;
    // Only an earlier write of unknown outcome that did apply can make our version stale: read it back.
    try {
      const entry = await guard(table.get(family, 'c'), `get ${key}`);
      this.oracle.observe(key, entry?.value ?? null, entry?.version ?? null);
      return undefined;
    } catch (err) {
      return err;
    }
  }

  /** Runs one write and records it: acknowledged, unknown outcome, or surely not applied. */
  private async write(keys: string[], value: string | null, call: () => Promise<(Version | null)[]>): Promise<unknown> {
    try {
      const versions = await guard(call(), `write of ${keys.join(',')}`);
      keys.forEach((k, i) => this.oracle.acknowledge(k, value, versions[i] ?? null));
      return undefined;
    } catch (err) {
      if (err instanceof UnavailableError && err.maybeApplied) for (const k of keys) this.oracle.uncertainWrite(k, value);
      return err;
    }
  }
}

/** Every entry of a table (through scanEntries), keyed like the oracle. */
export async function readAll(table: KeyValueTable<string, string>): Promise<Map<string, { value: string; version: Version }>> {
  const out = new Map<string, { value: string; version: Version }>();
  for await (const page of table.scanEntries({ maxKeysAtOnce: 1000 })) {
    for (const e of page.items) out.set(oracleKey(e.family, e.key), { value: e.value, version: e.version });
  }
  return out;
}

/** Batch families whose keys hold different values (a partially applied batch). */
export function partialBatches(data: Map<string, { value: string }>, writers: number): string[] {
  const out: string[] = [];
  for (let w = 0; w < writers; w++) {
    const { batch } = familiesOf(w);
    const values = new Set(BATCH_KEYS.map((k) => data.get(oracleKey(batch, k))?.value ?? null));
    if (values.size > 1) out.push(`${batch}: ${[...values].join(' / ')}`);
  }
  return out;
}
