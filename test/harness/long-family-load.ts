/**
 * A write load of full batches in long key families, for fault tests: each writer owns one family
 * whose name is 2,048 bytes long and alternates a putAll of all its BIG_FAMILY_KEYS (256 keys, one
 * value for the batch) with a getAll of them, so that one coalescer holds hundreds of calls of over
 * half a MiB each. A family's oracle key is the family itself and its value the batch's: a getAll
 * must find all 256 keys with one value (a batch is atomic) that the {@link WriteOracle} allows.
 * Every call is guarded so a hang fails the test instead of stalling it.
 */
import { KeyValueTable, UnavailableError, Version } from '../../client';
import { BIG_FAMILY_KEYS } from './big-batch-workload';
import { guard } from './load';
import { mulberry32, WriteOracle } from './oracle';

/** One call of the load. */
export interface BatchCall {
  writer: number;
  family: string;
  kind: 'putAll' | 'getAll';
  /** Date.now() when it was made and when it ended. */
  startedAt: number;
  endedAt: number;
  error?: unknown;
}

/** What a getAll of a family found: one value on all its keys (null: none), or a mix (a partial batch). */
type FamilyRead = { value: string | null; version: Version | null } | { mixed: string };

/** Keys spread over a whole batch (a partial batch shows in them as well as in all 256, read faster). */
export const SAMPLE_KEYS = [0, 85, 170, 255].map((i) => BIG_FAMILY_KEYS[i]);

/** Reads `keys` (by default every key) of `family` in one getAll. */
export async function readFamily(table: KeyValueTable<string, string>, family: string, keys: readonly string[] = BIG_FAMILY_KEYS): Promise<FamilyRead> {
  const entries = await guard(table.getAll(family, keys), `getAll of ${family.slice(0, 12)}…`);
  const values = new Set(entries.map((e) => e?.value ?? null));
  if (values.size > 1) return { mixed: `${values.size} values: ${[...values].slice(0, 3).join(', ')}…` };
  return { value: entries[0]?.value ?? null, version: entries[0]?.version ?? null };
}

/** `writers.length` writers, writer w on family `families[w]`, all through `table`. */
export class LongFamilyLoad {
  private readonly random: (() => number)[];
  private readonly counters: number[];
  /** Calls finished so far (for tests that act once the load is under way). */
  finished = 0;
  /** Families a getAll found with keys of two batches (must stay empty). */
  readonly partial: string[] = [];

  constructor(
    readonly table: KeyValueTable<string, string>,
    readonly oracle: WriteOracle,
    readonly families: string[],
    seed: number,
  ) {
    this.random = families.map((_, w) => mulberry32(seed * 1000 + w));
    this.counters = families.map(() => 0);
  }

  /**
   * Runs every writer until it made `maxCalls` calls or `durationMs` passed; each writer's first
   * call is a putAll, so that they start as one burst.
   */
  async run(maxCalls: number, durationMs: number): Promise<BatchCall[]> {
    const end = Date.now() + durationMs;
    const calls = await Promise.all(
      this.families.map(async (_, w) => {
        const mine: BatchCall[] = [];
        for (let i = 0; i < maxCalls && Date.now() < end; i++) {
          mine.push(await (i === 0 || this.random[w]() < 0.6 ? this.putAll(w) : this.getAll(w)));
          this.finished++;
        }
        return mine;
      }),
    );
    return calls.flat();
  }

  private async putAll(w: number): Promise<BatchCall> {
    const family = this.families[w];
    const value = `w${w}.${++this.counters[w]}`;
    const startedAt = Date.now();
    try {
      const versions = await guard(
        this.table.putAll(
          family,
          BIG_FAMILY_KEYS.map((k) => [k, value] as const),
        ),
        `putAll of writer ${w}`,
      );
      this.oracle.acknowledge(family, value, versions[0]);
      return { writer: w, family, kind: 'putAll', startedAt, endedAt: Date.now() };
    } catch (error) {
      if (error instanceof UnavailableError && error.maybeApplied) this.oracle.uncertainWrite(family, value);
      return { writer: w, family, kind: 'putAll', startedAt, endedAt: Date.now(), error };
    }
  }

  private async getAll(w: number): Promise<BatchCall> {
    const family = this.families[w];
    const startedAt = Date.now();
    try {
      const read = await readFamily(this.table, family);
      if ('mixed' in read) this.partial.push(`writer ${w}: ${read.mixed}`);
      else this.oracle.observe(family, read.value, read.version);
      return { writer: w, family, kind: 'getAll', startedAt, endedAt: Date.now() };
    } catch (error) {
      return { writer: w, family, kind: 'getAll', startedAt, endedAt: Date.now(), error };
    }
  }
}
