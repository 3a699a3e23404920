/**
 * Reads over chunked families from one LevelDB snapshot each: iterator pages of one family, pages of a
 * segment-wide scan, and the live totals of a segment.
 *
 * Starting in the middle of a family needs the chunk holding the start key (the last chunk key <= it),
 * found with a reverse seek, and then a forward read from it: two snapshots. That is sound as long as
 * the forward read still finds that very chunk first (chunk keys never move, so every key >= it is
 * in it or after it); if a writer removed it in between, the read starts over, and after a few
 * tries reads from the family's first chunk in a single snapshot.
 */
import type { ClassicLevel } from 'classic-level';
import { MAX_ITERATOR_PAGE_BYTES } from '../../proto/limits';
import { ChunkEntry, decodeChunk, walkChunk } from './chunk-codec';
import { isChunkKey } from './family-store';
import { dataKeyHeaderLength, familyOf, familyPrefix, prefixSuccessor, userKeyOf, valueBytes, valueExpiresAt, valueSequence } from './key-codec';
import { KeyBounds, userBounds } from './key-range';
import { FamilyPageSink, PageCaps } from './page-sink';
import type { ScanPage } from './page-reader';
import type { CheckedIterate } from './read-validation';

type Db = ClassicLevel<Buffer, Buffer>;
type Range = { gt?: Buffer; gte?: Buffer; lt?: Buffer; lte?: Buffer };

const EMPTY = Buffer.alloc(0);
/** Chunk records fetched per iterator step. */
const RECORDS_PER_STEP = 8;
/** Tries of the two-snapshot start before reading from the family's first chunk. */
const START_TRIES = 3;

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
  const found = await db.keys({ gte: prefix, lte: storageKey, reverse: true, limit: 1, keyEncoding: 'buffer' }).all();
  return found[0];
}

/**
 * Calls `visit` with every record from the chunk holding `startKey` (in family `prefix`) on, in
 * ascending order, within `range`'s upper bound; stops when `visit` returns false. See the module
 * comment for why the start is checked.
 */
async function forwardFrom(
  db: Db,
  prefix: Buffer,
  startKey: Buffer | undefined,
  upper: Range,
  visit: (key: Buffer, value: Buffer) => boolean,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const start = startKey && attempt < START_TRIES ? await floorChunk(db, prefix, startKey) : undefined;
    const it = db.iterator({ gte: start ?? prefix, ...upper, keyEncoding: 'buffer', valueEncoding: 'buffer' });
    let checked = start === undefined;
    try {
      for (;;) {
        const records = await it.nextv(RECORDS_PER_STEP);
        if (records.length === 0) break;
        for (const [key, value] of records) {
          if (!checked) {
            if (!key.equals(start!)) break;
            checked = true;
          }
          if (!visit(key, value)) return;
        }
        if (!checked) break;
      }
    } finally {
      await it.close();
    }
    if (checked) return;
    // The start chunk is gone (a writer emptied it between the two snapshots): try again.
  }
}

const live = (e: ChunkEntry, now: number): boolean => e.expiresAt === 0 || e.expiresAt > now;

/**
 * One iterator page of a keyed family (chunked), in unsigned bytewise key order or its reverse, into
 * `sink` (page objects or wire bytes; the sink applies the page caps).
 */
export async function readFamilyPage<P>(db: Db, dataPrefix: Buffer, req: CheckedIterate, now: number, sink: FamilyPageSink<P>): Promise<P> {
  const prefix = familyPrefix(dataPrefix, req.family);
  const bounds: KeyBounds = { prefix: req.prefix, from: req.from, to: req.to, toInclusive: req.toInclusive, after: req.after, reverse: req.reverse };
  const { lower, upper } = userBounds(bounds);
  if (lower && upper) {
    const c = Buffer.compare(lower.key, upper.key);
    if (c > 0 || (c === 0 && !(lower.inclusive && upper.inclusive))) return sink.finish(true);
  }
  let record: Buffer = EMPTY;
  // Entry keys are compared where they lie in their record.
  const belowLower = (ks: number, ke: number): boolean => {
    if (!lower) return false;
    const c = record.compare(lower.key, 0, lower.key.length, ks, ke);
    return c < 0 || (c === 0 && !lower.inclusive);
  };
  const aboveUpper = (ks: number, ke: number): boolean => {
    if (!upper) return false;
    const c = record.compare(upper.key, 0, upper.key.length, ks, ke);
    return c > 0 || (c === 0 && !upper.inclusive);
  };
  const end: Range = upper ? { lte: Buffer.concat([prefix, upper.key]) } : { lt: prefixSuccessor(prefix) };
  /** Set when the page ended because the next entry did not fit (something follows). */
  let full = false;
  /** Set when the reverse walk went below the lower bound (nothing follows). */
  let passed = false;
  const take = (ks: number, ke: number, vs: number, ve: number, sequence: number, expiresAt: number): boolean => {
    if (expiresAt !== 0 && expiresAt <= now) return true;
    if (sink.add(record, ks, ke, vs, ve, sequence)) return true;
    full = true;
    return false;
  };

  if (!req.reverse) {
    const forward = (ks: number, ke: number, vs: number, ve: number, sequence: number, expiresAt: number): boolean => {
      if (belowLower(ks, ke)) return true;
      if (aboveUpper(ks, ke)) return false;
      return take(ks, ke, vs, ve, sequence, expiresAt);
    };
    await forwardFrom(db, prefix, lower ? Buffer.concat([prefix, lower.key]) : undefined, end, (_key, value) => {
      record = value;
      return walkChunk(record, false, forward);
    });
    return sink.finish(!full);
  }

  const backward = (ks: number, ke: number, vs: number, ve: number, sequence: number, expiresAt: number): boolean => {
    if (aboveUpper(ks, ke)) return true;
    if (belowLower(ks, ke)) {
      passed = true;
      return false;
    }
    return take(ks, ke, vs, ve, sequence, expiresAt);
  };
  const it = db.iterator({ gte: prefix, ...end, reverse: true, keyEncoding: 'buffer', valueEncoding: 'buffer' });
  try {
    for (;;) {
      const records = await it.nextv(RECORDS_PER_STEP);
      if (records.length === 0) break;
      for (const [, value] of records) {
        record = value;
        if (!walkChunk(record, true, backward)) return sink.finish(passed);
      }
    }
  } finally {
    await it.close();
  }
  return sink.finish(true);
}

/**
 * One page of every entry of a segment, in storage order (keyed families, then family-less keys),
 * strictly after `after`: the position (data key without the segment prefix) of the last item of the
 * previous page, or empty for the first page.
 */
export async function readScanPage(
  db: Db,
  dataPrefix: Buffer,
  req: { maxItems: number; includeValues: boolean; after: Buffer },
  now: number,
  pageBytes = MAX_ITERATOR_PAGE_BYTES,
): Promise<ScanPage> {
  type Item = ScanPage['items'][number];
  const sink = new PageSink<Item>(req.maxItems, pageBytes);
  let done = true;
  let last: { record: Buffer; entry?: Buffer } | undefined;
  const afterKey = req.after.length > 0 ? Buffer.concat([dataPrefix, req.after]) : undefined;
  // Every data key of the segment is dataPrefix + ('F' | 'N') + …, so dataPrefix + 0xff bounds them.
  const end: Range = { lt: Buffer.concat([dataPrefix, Buffer.from([0xff])]) };

  const visit = (key: Buffer, record: Buffer): boolean => {
    if (!isChunkKey(key)) {
      if (afterKey && Buffer.compare(key, afterKey) <= 0) return true;
      const expiresAt = valueExpiresAt(record);
      if (expiresAt !== 0 && expiresAt <= now) return true;
      const item = { family: '', key: userKeyOf(key), value: req.includeValues ? valueBytes(record) : EMPTY, sequence: String(valueSequence(record)) };
      if (!sink.add(item)) {
        done = false;
        return false;
      }
      last = { record: key };
      return true;
    }
    const headerLength = dataKeyHeaderLength(key);
    const family = familyOf(key);
    const familyBytes = Buffer.byteLength(family);
    // Compare entry keys with the resume point only inside the family it names.
    const resume = afterKey && afterKey.length >= headerLength && afterKey.compare(key, 0, headerLength, 0, headerLength) === 0 ? afterKey.subarray(headerLength) : undefined;
    for (const e of decodeChunk(record)) {
      if (resume && Buffer.compare(e.key, resume) <= 0) continue;
      if (!live(e, now)) continue;
      if (!sink.add({ family, key: e.key, value: req.includeValues ? e.value : EMPTY, sequence: String(e.sequence) }, familyBytes)) {
        done = false;
        return false;
      }
      last = { record: key, entry: e.key };
    }
    return true;
  };

  if (!afterKey) {
    await forwardFrom(db, dataPrefix, undefined, end, visit);
  } else if (!isChunkKey(afterKey)) {
    await forEachRecord(db, { gt: afterKey, ...end }, visit);
  } else {
    const familyEnd = dataKeyHeaderLength(afterKey);
    await forwardFrom(db, afterKey.subarray(0, familyEnd), afterKey, end, visit);
  }
  let position = req.after;
  if (last && !last.entry) position = last.record.subarray(dataPrefix.length);
  else if (last) position = Buffer.concat([last.record.subarray(dataPrefix.length, dataKeyHeaderLength(last.record)), last.entry!]);
  return { items: sink.items, done, position };
}

async function forEachRecord(db: Db, range: Range, visit: (key: Buffer, value: Buffer) => boolean): Promise<void> {
  const it = db.iterator({ ...range, keyEncoding: 'buffer', valueEncoding: 'buffer' });
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
