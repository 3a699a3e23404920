/**
 * Reads over chunked families from one LevelDB snapshot each (snapshot-view.ts): iterator pages of
 * one family, pages of a segment-wide scan, and the live totals of a segment.
 *
 * Starting in the middle of a family needs the chunk holding the start key (the last chunk key <= it),
 * found with a reverse seek, and then a forward read from it; both read the same snapshot, so every
 * key >= the start key is in that chunk or after it.
 */
import { MAX_ITERATOR_PAGE_BYTES } from '../../../proto/limits';
import { ChunkEntry, decodeChunk, walkChunk } from '../chunks/chunk-codec';
import { isChunkKey } from '../chunks/family-store';
import { dataKeyHeaderLength, familyOf, familyPrefix, prefixSuccessor, userKeyOf, valueBytes, valueExpiresAt, valueSequence } from '../key-codec';
import { KeyBounds, userBounds } from '../key-range';
import { PageCaps } from './page-caps';
import type { FamilyPageSink } from './page-sink';
import type { ScanPage } from './page-reader';
import type { CheckedIterate } from './read-validation';
import type { Range, SnapshotView } from './snapshot-view';

type Db = SnapshotView;

const EMPTY = Buffer.alloc(0);
/** Chunk records fetched per iterator step. */
const RECORDS_PER_STEP = 8;

/** Collects page items under the page caps. */
class PageSink<T extends { key: Buffer; value: Buffer }> {
  readonly items: T[] = [];
  private readonly caps: PageCaps;
  constructor(maxItems: number, pageBytes: number) {
    this.caps = new PageCaps(maxItems, pageBytes);
  }

  /**
   * False when `item` does not fit: the page is complete and something follows. `extraBytes`: what
   * else the item carries on the wire (a scan item's family).
   */
  add(item: T, extraBytes = 0): boolean {
    if (!this.caps.admit(item.key.length + item.value.length + extraBytes)) return false;
    this.items.push(item);
    return true;
  }
}

/** Storage key of the chunk holding `storageKey` within the family at `prefix`, from a reverse seek. */
async function floorChunk(db: Db, prefix: Buffer, storageKey: Buffer): Promise<Buffer | undefined> {
  const found = await db.keys({ gte: prefix, lte: storageKey, reverse: true, limit: 1 }).all();
  return found[0];
}

/**
 * Calls `visit` with every record from the chunk holding `startKey` (in family `prefix`) on, in
 * ascending order, within `range`'s upper bound; stops when `visit` returns false.
 */
async function forwardFrom(db: Db, prefix: Buffer, startKey: Buffer | undefined, upper: Range, visit: (key: Buffer, value: Buffer) => boolean): Promise<void> {
  const start = startKey ? await floorChunk(db, prefix, startKey) : undefined;
  await forEachRecord(db, { gte: start ?? prefix, ...upper }, visit);
}

const live = (e: ChunkEntry, now: number): boolean => e.expiresAt === 0 || e.expiresAt > now;

export type Bound = NonNullable<ReturnType<typeof userBounds>['lower']>;

/** True when no key lies between `lower` and `upper`. */
export function emptyBetween(lower: Bound, upper: Bound): boolean {
  const c = Buffer.compare(lower.key, upper.key);
  return c > 0 || (c === 0 && !(lower.inclusive && upper.inclusive));
}

/**
 * The entry walk of one family page over the chunk records read in turn: skips entries outside the
 * bounds and expired ones, and hands the rest to the sink until it is full.
 */
export class FamilyPageWalk<P> {
  /** The chunk record being walked: entry keys are compared where they lie in it. */
  private record: Buffer = EMPTY;
  /** Set when the page ended because the next entry did not fit (something follows). */
  full = false;

  constructor(
    private readonly lower: Bound | undefined,
    private readonly upper: Bound | undefined,
    private readonly now: number,
    private readonly sink: FamilyPageSink<P>,
  ) {}

  /** Walks one chunk record in ascending key order; false when the page is complete. */
  readonly forwardRecord = (_key: Buffer, value: Buffer): boolean => {
    this.record = value;
    return walkChunk(value, false, this.forward);
  };

  /** Walks one chunk record in descending key order; false when the page is complete. */
  readonly backwardRecord = (_key: Buffer, value: Buffer): boolean => {
    this.record = value;
    return walkChunk(value, true, this.backward);
  };

  /** One entry of the ascending walk: below the lower bound it is skipped, past the upper it ends the walk. */
  private readonly forward = (ks: number, ke: number, vs: number, ve: number, sequence: number, expiresAt: number): boolean => {
    if (this.belowLower(ks, ke)) return true;
    if (this.aboveUpper(ks, ke)) return false;
    return this.take(ks, ke, vs, ve, sequence, expiresAt);
  };

  /**
   * One entry of the descending walk: above the upper bound it is skipped, past the lower it ends the
   * walk (nothing follows: `full` stays false).
   */
  private readonly backward = (ks: number, ke: number, vs: number, ve: number, sequence: number, expiresAt: number): boolean => {
    if (this.aboveUpper(ks, ke)) return true;
    if (this.belowLower(ks, ke)) return false;
    return this.take(ks, ke, vs, ve, sequence, expiresAt);
  };

  /** True when the key at `record[ks, ke)` is below the lower bound. */
  private belowLower(ks: number, ke: number): boolean {
    const lower = this.lower;
    if (!lower) return false;
    const c = this.record.compare(lower.key, 0, lower.key.length, ks, ke);
    return c < 0 || (c === 0 && !lower.inclusive);
  }

  /** True when the key at `record[ks, ke)` is above the upper bound. */
  private aboveUpper(ks: number, ke: number): boolean {
    const upper = this.upper;
    if (!upper) return false;
    const c = this.record.compare(upper.key, 0, upper.key.length, ks, ke);
    return c > 0 || (c === 0 && !upper.inclusive);
  }

  /** Adds a live entry to the sink (an expired one is skipped); false when it did not fit. */
  private take(ks: number, ke: number, vs: number, ve: number, sequence: number, expiresAt: number): boolean {
    if (expiresAt !== 0 && expiresAt <= this.now) return true;
    if (this.sink.add(this.record, ks, ke, vs, ve, sequence)) return true;
    this.full = true;
    return false;
  }
}

/**
 * One iterator page of a keyed family (chunked), in unsigned bytewise key order or its reverse, into
 * `sink` (page objects or wire bytes; the sink applies the page caps). The page is done unless it
 * ended because the next entry did not fit.
 */
export async function readFamilyPage<P>(db: Db, dataPrefix: Buffer, req: CheckedIterate, now: number, sink: FamilyPageSink<P>): Promise<P> {
  const prefix = familyPrefix(dataPrefix, req.family);
  const bounds: KeyBounds = { prefix: req.prefix, from: req.from, to: req.to, toInclusive: req.toInclusive, after: req.after, reverse: req.reverse };
  const { lower, upper } = userBounds(bounds);
  if (lower && upper && emptyBetween(lower, upper)) return sink.finish(true);
  const end: Range = upper ? { lte: Buffer.concat([prefix, upper.key]) } : { lt: prefixSuccessor(prefix) };
  const walk = new FamilyPageWalk(lower, upper, now, sink);
  if (req.reverse) await forEachRecord(db, { gte: prefix, ...end, reverse: true }, walk.backwardRecord);
  else await forwardFrom(db, prefix, lower ? Buffer.concat([prefix, lower.key]) : undefined, end, walk.forwardRecord);
  return sink.finish(!walk.full);
}

type ScanItem = ScanPage['items'][number];

/** Collects one scan page: the live entries after the resume point, and where the last one taken lies. */
class ScanCollector {
  readonly sink: PageSink<ScanItem>;
  /** False when the page ended because the next entry did not fit (something follows). */
  done = true;
  /** Storage key of the record of the last item taken. */
  private lastRecord: Buffer | undefined;
  /** Key of the last item taken within its chunk (undefined for a family-less item). */
  private lastEntry: Buffer | undefined;

  /** @param afterKey the data key the page continues strictly after, if any */
  constructor(
    private readonly afterKey: Buffer | undefined,
    private readonly includeValues: boolean,
    private readonly now: number,
    maxItems: number,
    pageBytes: number,
  ) {
    this.sink = new PageSink<ScanItem>(maxItems, pageBytes);
  }

  /** Takes the entries of one record (a family-less entry or a chunk); false when the page is complete. */
  readonly visit = (key: Buffer, record: Buffer): boolean => (isChunkKey(key) ? this.visitChunk(key, record) : this.visitPlain(key, record));

  /** Takes a family-less entry unless it is at or before the resume point, or expired. */
  private visitPlain(key: Buffer, record: Buffer): boolean {
    if (this.afterKey && Buffer.compare(key, this.afterKey) <= 0) return true;
    const expiresAt = valueExpiresAt(record);
    if (expiresAt !== 0 && expiresAt <= this.now) return true;
    const item = { family: '', key: userKeyOf(key), value: this.includeValues ? valueBytes(record) : EMPTY, sequence: String(valueSequence(record)) };
    if (!this.sink.add(item)) return this.stop();
    this.lastRecord = key;
    this.lastEntry = undefined;
    return true;
  }

  /** Takes the live entries of a chunk after the resume point. */
  private visitChunk(key: Buffer, record: Buffer): boolean {
    const headerLength = dataKeyHeaderLength(key);
    const family = familyOf(key);
    const familyBytes = Buffer.byteLength(family);
    const afterKey = this.afterKey;
    // Compare entry keys with the resume point only inside the family it names.
    const resume = afterKey && afterKey.length >= headerLength && afterKey.compare(key, 0, headerLength, 0, headerLength) === 0 ? afterKey.subarray(headerLength) : undefined;
    for (const e of decodeChunk(record)) {
      if (resume && Buffer.compare(e.key, resume) <= 0) continue;
      if (!live(e, this.now)) continue;
      if (!this.sink.add({ family, key: e.key, value: this.includeValues ? e.value : EMPTY, sequence: String(e.sequence) }, familyBytes)) return this.stop();
      this.lastRecord = key;
      this.lastEntry = e.key;
    }
    return true;
  }

  /** Ends the page at an item that did not fit (something follows); false, to stop the walk. */
  private stop(): boolean {
    this.done = false;
    return false;
  }

  /** Where the next page continues: after the last item taken, else at `after` (nothing taken). */
  position(dataPrefix: Buffer, after: Buffer): Buffer {
    const record = this.lastRecord;
    if (!record) return after;
    if (!this.lastEntry) return record.subarray(dataPrefix.length);
    return Buffer.concat([record.subarray(dataPrefix.length, dataKeyHeaderLength(record)), this.lastEntry]);
  }
}

/**
 * One page of every entry of a segment, in storage order (keyed families, then family-less keys),
 * strictly after `after`: the position (data key without the segment prefix) of the last item of the
 * previous page, or empty for the first page.
 */
export async function readScanPage(db: Db, dataPrefix: Buffer, req: { maxItems: number; includeValues: boolean; after: Buffer }, now: number, pageBytes = MAX_ITERATOR_PAGE_BYTES): Promise<ScanPage> {
  const afterKey = req.after.length > 0 ? Buffer.concat([dataPrefix, req.after]) : undefined;
  const page = new ScanCollector(afterKey, req.includeValues, now, req.maxItems, pageBytes);
  await scanFrom(db, dataPrefix, afterKey, page.visit);
  return { items: page.sink.items, done: page.done, position: page.position(dataPrefix, req.after) };
}

/** Calls `visit` with every record of the segment at `dataPrefix` after `afterKey` (see readScanPage). */
async function scanFrom(db: Db, dataPrefix: Buffer, afterKey: Buffer | undefined, visit: (key: Buffer, value: Buffer) => boolean): Promise<void> {
  // Every data key of the segment is dataPrefix + ('F' | 'N') + …, so dataPrefix + 0xff bounds them.
  const end: Range = { lt: Buffer.concat([dataPrefix, Buffer.from([0xff])]) };
  if (!afterKey) return forwardFrom(db, dataPrefix, undefined, end, visit);
  // After a family-less key: every record after it; after a family entry: from the chunk holding it.
  if (!isChunkKey(afterKey)) return forEachRecord(db, { gt: afterKey, ...end }, visit);
  return forwardFrom(db, afterKey.subarray(0, dataKeyHeaderLength(afterKey)), afterKey, end, visit);
}

/** Calls `visit` with every record in `range` (in its direction) until it returns false. */
async function forEachRecord(db: Db, range: Range & { reverse?: boolean }, visit: (key: Buffer, value: Buffer) => boolean): Promise<void> {
  const it = db.iterator(range);
  try {
    for (;;) {
      const records = await it.nextv(RECORDS_PER_STEP);
      if (records.length === 0) return;
      for (const [key, value] of records) if (!visit(key, value)) return;
    }
  } finally {
    await it.close();
  }
}

/** Live entries and their key + value bytes in a segment (chunked families and family-less keys). */
export async function countSegment(db: Db, dataPrefix: Buffer, now: number): Promise<{ count: number; bytes: number }> {
  let count = 0;
  let bytes = 0;
  await forEachRecord(db, { gte: dataPrefix, lt: prefixSuccessor(dataPrefix) }, (key, record) => {
    if (isChunkKey(key)) {
      for (const e of decodeChunk(record)) {
        if (!live(e, now)) continue;
        count++;
        bytes += e.key.length + e.value.length;
      }
      return true;
    }
    const expiresAt = valueExpiresAt(record);
    if (expiresAt === 0 || expiresAt > now) {
      count++;
      bytes += userKeyOf(key).length + record.length - 16;
    }
    return true;
  });
  return { count, bytes };
}
