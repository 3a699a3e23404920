/**
 * The linearizability workload on key families that span many chunks (see
 * segmentstore/storage/chunk-codec.ts: at most MAX_CHUNK_BYTES of entries to a chunk), for the reads
 * that go wrong at chunk boundaries: a get that still finds a key of a chunk an acknowledged update
 * removed whole, an iterator that sees part of a split.
 *
 * Values are padded to {@link WIDE_VALUE_BYTES} by the table's value serializer
 * ({@link paddedValues}), so that {@link WIDE_CHUNK_KEYS} entries fill a chunk; the history records
 * them unpadded. Families are filled, emptied and refilled by runs aligned to WIDE_CHUNK_KEYS keys,
 * so their chunk boundaries mostly lie where the aligned removals start and end: whole chunks removed
 * by a range, by removing each of their keys, from a boundary to the family's end; ranges across a
 * boundary; a chunk removed and rewritten in one update. Right after each removal the same client
 * reads the keys it removed and those around the boundary (a get, a getAll), and before some of them
 * it reads a page (which makes the store apply its log, so LevelDB holds the chunks about to go).
 * Iterations go both ways in small pages over the family or a stretch of it. Now and then a client
 * writes one key of a chunk, a ballast bigger than the 1 MiB the stores apply their logs in (to a
 * family of its own on the same store, not recorded) and a run that splits that chunk, all at once
 * (so they share a flush), and then iterates: an apply that writes the chunk's left half in its first
 * slice and the right half in a later one.
 */
import type { KeyValueTable, Serializer } from '../../client';
import type { KeyRange, Mod } from './kv-model';
import { HistoryRecorder, WorkloadClient, WorkloadKeys } from './kv-workload';

/** Length of every stored value: `id|xxxx…`. */
export const WIDE_VALUE_BYTES = 1_400;
/**
 * Entries of WIDE_VALUE_BYTES (and 4-byte keys) that fill a chunk: 11 × (22 + 4 + 1,400) bytes fit in
 * MAX_CHUNK_BYTES (16 KiB), 12 do not.
 */
export const WIDE_CHUNK_KEYS = 11;

/** The key of number `n` of a wide family: `w000`, `w001`, … */
export function wideKey(n: number): string {
  return `w${String(n).padStart(3, '0')}`;
}

/**
 * A value serializer that pads every value (an id without `|`) to WIDE_VALUE_BYTES and strips the
 * padding when reading; a value not padded exactly so reads as `MANGLED(…)`, which no write made.
 */
export function paddedValues(): Serializer<string> {
  return {
    serialize(id: string): Uint8Array {
      return Buffer.from(`${id}|${'x'.repeat(Math.max(0, WIDE_VALUE_BYTES - id.length - 1))}`, 'utf8');
    },
    deserialize(bytes: Uint8Array): string {
      const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
      const bar = text.indexOf('|');
      const id = text.slice(0, bar);
      const ok = bar > 0 && text.length === Math.max(WIDE_VALUE_BYTES, id.length + 1) && /^x*$/.test(text.slice(bar + 1));
      return ok ? id : `MANGLED(${text.length} bytes: ${text.slice(0, 40)})`;
    },
  };
}

/** Values of a ballast write and their size: together more than an apply slice (1 MiB). */
const BALLAST_VALUES = 4;
const BALLAST_VALUE_BYTES = 264 * 1024;

/** A client of the workload on wide families (`keys.familyKeys` are `wideKey(0)` … in order). */
export class WideFamilyClient extends WorkloadClient {
  /** Runs of aligned keys written or removed, and reads right after removals (statistics). */
  readonly shapes = { fills: 0, wholeChunks: 0, chunkRemoves: 0, toEnd: 0, acrossBoundary: 0, rewritten: 0, readsAfter: 0, splitsUnderBallast: 0 };
  private ballasts = 0;

  /**
   * @param ballastFamily the family, on the same store as each wide family, that ballast writes go to
   */
  constructor(
    client: number,
    table: KeyValueTable<string, string>,
    recorder: HistoryRecorder,
    keys: WorkloadKeys,
    rand: () => number,
    private readonly ballastFamily: ReadonlyMap<string, string>,
  ) {
    super(client, table, recorder, keys, rand);
  }

  private get span(): number {
    return this.keys.familyKeys.length;
  }

  /** A chunk-aligned key number: the lower key of a chunk filled by aligned runs. */
  private aligned(): number {
    return WIDE_CHUNK_KEYS * Math.floor(this.rand() * Math.floor(this.span / WIDE_CHUNK_KEYS));
  }

  private keysFrom(from: number, to: number): string[] {
    return this.keys.familyKeys.slice(Math.max(0, from), Math.min(this.span, to));
  }

  /** One random operation. */
  override async step(): Promise<void> {
    const family = this.pick(this.keys.families);
    const r = this.rand();
    if (r < 0.02) return this.splitUnderBallast(family);
    if (r < 0.14) return this.fill(family);
    if (r < 0.34) return this.removeShape(family);
    if (r < 0.52) return this.iterateSome(family);
    if (r < 0.64) return this.read(family, this.some(this.keys.familyKeys, 1 + Math.floor(this.rand() * 6)), 'getAll');
    return this.single(family, this.pick(this.keys.familyKeys), this.rand());
  }

  /** An aligned run of one to three chunks' worth of keys, written in one putAll (ascending). */
  private fill(family: string): Promise<void> {
    this.shapes.fills++;
    const from = this.aligned();
    const keys = this.keysFrom(from, from + WIDE_CHUNK_KEYS * (1 + Math.floor(this.rand() * 3)));
    const entries = keys.map((k) => [k, this.value(k)] as const);
    return this.update(
      family,
      'putAll',
      entries.map(([key, value]) => ({ type: 'put', key, value })),
      () => this.table.putAll(family, entries),
    );
  }

  /**
   * A key of a chunk put, a ballast over an apply slice, and a run splitting that chunk, all issued at
   * once (one flush), then a page of the family read (which makes the store apply them).
   */
  private async splitUnderBallast(family: string): Promise<void> {
    this.shapes.splitsUnderBallast++;
    const a = this.aligned();
    const touched = this.keys.familyKeys[a + Math.floor(this.rand() * WIDE_CHUNK_KEYS)];
    const run = this.keysFrom(a + 2, a + 2 + WIDE_CHUNK_KEYS + 3).map((k) => [k, this.value(k)] as const);
    const ballast = Array.from({ length: BALLAST_VALUES }, (_, i) => [`b${this.client}.${(this.ballasts * BALLAST_VALUES + i) % 32}`, `${'b'.repeat(BALLAST_VALUE_BYTES)}`] as const);
    this.ballasts++;
    await Promise.all([
      this.put(family, touched),
      this.table.putAll(this.ballastFamily.get(family)!, ballast).catch(() => undefined),
      this.update(
        family,
        'putAll',
        run.map(([key, value]) => ({ type: 'put', key, value })),
        () => this.table.putAll(family, run),
      ),
    ]);
    await this.iterateWith(
      family,
      { maxKeysAtOnce: 4 + Math.floor(this.rand() * 8), reverse: false, from: this.keys.familyKeys[a + 1] },
      { lower: { key: this.keys.familyKeys[a + 1], inclusive: true } },
      6,
    );
  }

  /** One of the removal shapes (see the module comment), then the reads right after it. */
  private async removeShape(family: string): Promise<void> {
    // Half the time one page first: the store then applies its log, so the chunks are in LevelDB.
    if (this.rand() < 0.5) await this.iterateWith(family, { maxKeysAtOnce: 3, reverse: this.rand() < 0.5 }, {}, 1);
    const a = this.aligned();
    const chunks = 1 + Math.floor(this.rand() * 3);
    const b = Math.min(this.span, a + chunks * WIDE_CHUNK_KEYS);
    const key = (n: number): string => this.keys.familyKeys[Math.max(0, Math.min(this.span - 1, n))];
    const x = this.rand();
    let from = a;
    let to = b;
    if (x < 0.3) {
      this.shapes.wholeChunks++;
      const range: KeyRange = { lower: { key: key(a), inclusive: true }, upper: { key: key(b), inclusive: false } };
      await this.update(family, 'update', [{ type: 'removeRange', range }], () => this.table.update(family, [{ type: 'removeRange', from: key(a), to: key(b) }]));
    } else if (x < 0.5) {
      this.shapes.chunkRemoves++;
      const keys = this.keysFrom(a, a + WIDE_CHUNK_KEYS);
      to = a + WIDE_CHUNK_KEYS;
      await this.update(
        family,
        'removeAll',
        keys.map((k): Mod => ({ type: 'remove', key: k })),
        () =>
          this.table
            .removeAll(
              family,
              keys.map((k) => ({ key: k })),
            )
            .then(() => keys.map(() => null)),
      );
    } else if (x < 0.65) {
      this.shapes.toEnd++;
      to = this.span;
      await this.update(family, 'update', [{ type: 'removeRange', range: { lower: { key: key(a), inclusive: true } } }], () => this.table.update(family, [{ type: 'removeRange', from: key(a) }]));
    } else if (x < 0.85) {
      this.shapes.acrossBoundary++;
      from = Math.max(0, a - 1 - Math.floor(this.rand() * 4));
      to = Math.min(this.span, a + 1 + Math.floor(this.rand() * (WIDE_CHUNK_KEYS + 4)));
      const range: KeyRange = { lower: { key: key(from), inclusive: true }, upper: { key: key(to), inclusive: false } };
      await this.update(family, 'update', [{ type: 'removeRange', range }], () => this.table.update(family, [{ type: 'removeRange', from: key(from), to: key(to) }]));
    } else {
      // The chunk's range removed and two of its keys written again, in one update.
      this.shapes.rewritten++;
      to = a + WIDE_CHUNK_KEYS;
      const again = this.some(this.keysFrom(a, to), 2).sort();
      const puts = again.map((k) => ({ type: 'put' as const, key: k, value: this.value(k) }));
      const range: KeyRange = { lower: { key: key(a), inclusive: true }, upper: { key: key(to), inclusive: false } };
      await this.update(family, 'update', [{ type: 'removeRange', range }, ...puts], () => this.table.update(family, [{ type: 'removeRange', from: key(a), to: key(to) }, ...puts]));
    }
    // Right after: a key inside, then the keys around both ends and one inside, in one getAll.
    this.shapes.readsAfter++;
    await this.read(family, [key(from + Math.floor(this.rand() * Math.max(1, to - from)))], 'get');
    const around = [...new Set([from - 1, from, from + 1, to - 1, to, from + Math.floor((to - from) / 2)].filter((n) => n >= 0 && n < this.span).map(key))];
    await this.read(family, around, 'getAll');
  }

  /** An iteration either way in small pages: the whole family, or a stretch of it. */
  private iterateSome(family: string): Promise<void> {
    const maxKeysAtOnce = 2 + Math.floor(this.rand() * 12);
    const reverse = this.rand() < 0.5;
    if (this.rand() < 0.5) return this.iterateWith(family, { maxKeysAtOnce, reverse }, {}, 12);
    const a = this.aligned() + (this.rand() < 0.5 ? 0 : Math.floor(this.rand() * WIDE_CHUNK_KEYS));
    const b = Math.min(this.span - 1, a + 5 + Math.floor(this.rand() * 3 * WIDE_CHUNK_KEYS));
    const [from, to] = [this.keys.familyKeys[Math.min(a, this.span - 1)], this.keys.familyKeys[b]];
    const toInclusive = this.rand() < 0.5;
    return this.iterateWith(family, { maxKeysAtOnce, reverse, from, to, toInclusive }, { lower: { key: from, inclusive: true }, upper: { key: to, inclusive: toInclusive } }, 12);
  }
}
