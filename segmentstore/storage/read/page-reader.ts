/**
 * Reads one iterator page of the family-less keys of a segment (one record per key; keyed families
 * are chunked and read by chunk-reader.ts) from a LevelDB snapshot (snapshot-view.ts): keys in unsigned bytewise order
 * (or its reverse), expired entries skipped, exactly `maxItems` items unless the page byte cap ends
 * the page first (a page always holds at least one item), and `done` only when nothing follows.
 */
import { MAX_ITERATOR_PAGE_BYTES } from '../../../proto/limits';
import { familyPrefix, userKeyOf, valueBytes, valueExpiresAt, valueSequence } from '../key-codec';
import { storageRange } from '../key-range';
import { PageCaps } from './page-caps';
import type { CheckedIterate } from './read-validation';
import type { SnapshotView } from './snapshot-view';

/** One item of a page. */
export interface PageItem {
  key: Buffer;
  value: Buffer;
  sequence: string;
}

/** A page and whether it is the last one; its items are wire Entries (found is always true). */
export interface Page {
  items: (PageItem & { found: true })[];
  done: boolean;
}

const EMPTY = Buffer.alloc(0);

/** Reads one page of one family; `now` decides expiry. */
export async function readPage(db: SnapshotView, dataPrefix: Buffer, req: CheckedIterate, now: number, pageBytes = MAX_ITERATOR_PAGE_BYTES): Promise<Page> {
  const range = storageRange(familyPrefix(dataPrefix, req.family), req);
  if (!range) return { items: [], done: true };
  const page = await collect(db, { ...range, reverse: req.reverse }, req, now, pageBytes, (key, value, stored) => ({
    found: true as const,
    key: userKeyOf(key),
    value,
    sequence: String(valueSequence(stored)),
  }));
  return { items: page.items, done: page.done };
}

/** A page of a segment-wide scan: items of every family and the position to continue after. */
export interface ScanPage {
  items: (PageItem & { family: string })[];
  done: boolean;
  position: Buffer;
}

/**
 * The page loop of family-less iteration: skips expired entries, stops at `maxItems` items or
 * when the next item would pass the byte cap (a page always holds at least one item).
 */
async function collect<T extends { key: Buffer; value: Buffer }>(
  db: SnapshotView,
  range: { gt?: Buffer; gte?: Buffer; lt?: Buffer; lte?: Buffer; reverse: boolean },
  req: { maxItems: number; includeValues: boolean },
  now: number,
  pageBytes: number,
  toItem: (key: Buffer, value: Buffer, stored: Buffer) => T,
): Promise<{ items: T[]; done: boolean }> {
  const it = db.iterator(range);
  const items: T[] = [];
  const caps = new PageCaps(req.maxItems, pageBytes);
  try {
    const chunk = Math.min(req.maxItems + 1, 1000);
    for (;;) {
      const entries = await it.nextv(chunk);
      if (entries.length === 0) return { items, done: true };
      for (const [key, stored] of entries) {
        const expiresAt = valueExpiresAt(stored);
        if (expiresAt !== 0 && expiresAt <= now) continue;
        // A live entry that does not fit: the page is complete and something follows.
        const item = toItem(key, req.includeValues ? valueBytes(stored) : EMPTY, stored);
        if (!caps.admit(item.key.length + item.value.length)) return { items, done: false };
        items.push(item);
      }
    }
  } finally {
    await it.close();
  }
}
