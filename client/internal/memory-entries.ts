/**
 * The entries of one key family of an in-memory table segment, kept sorted by unsigned bytewise key
 * order in an array (binary search to find, splice to insert): what LevelDB's order gives the
 * segment store, at a size meant for unit tests. Key bounds mean what they mean to the store
 * (proto/key-bounds.ts).
 */
import { inBounds, KeyBounds, prefixSuccessor } from '../../proto/key-bounds';
import { MAX_ITERATOR_PAGE_BYTES } from '../../proto/limits';

/** One stored entry; `expiresAt` 0 = never. */
export interface MemoryEntry {
  key: Buffer;
  value: Buffer;
  sequence: number;
  expiresAt: number;
}

/** A page of entries and whether nothing live follows it. */
export interface EntryPage {
  entries: MemoryEntry[];
  done: boolean;
}

/** True when the entry has expired at `now`. */
export function expired(e: MemoryEntry, now: number): boolean {
  return e.expiresAt !== 0 && e.expiresAt <= now;
}

/** Byte count of a page item: key, and value when the page carries values. */
type ItemBytes = (e: MemoryEntry) => number;

/** The sorted entries of one family. */
export class SortedEntries {
  private readonly entries: MemoryEntry[] = [];

  /** Entries held, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.length;
  }

  /** The live entry of `key` at `now`, or undefined (an expired one is dropped on the way). */
  get(key: Buffer, now: number): MemoryEntry | undefined {
    const i = this.indexOf(key);
    if (i < 0) return undefined;
    const e = this.entries[i];
    if (!expired(e, now)) return e;
    this.entries.splice(i, 1);
    return undefined;
  }

  /** Inserts or replaces the entry of `e.key`. */
  set(e: MemoryEntry): void {
    const i = this.indexOf(e.key);
    if (i >= 0) this.entries[i] = e;
    else this.entries.splice(-i - 1, 0, e);
  }

  /** Removes the entry of `key`, if any. */
  delete(key: Buffer): void {
    const i = this.indexOf(key);
    if (i >= 0) this.entries.splice(i, 1);
  }

  /** Removes every entry within `bounds` (forward bounds: a range removal's). */
  deleteWhere(bounds: KeyBounds): void {
    const [lo, hi] = this.span(bounds);
    const kept = this.entries.slice(lo, hi).filter((e) => !inBounds(e.key, bounds));
    this.entries.splice(lo, hi - lo, ...kept);
  }

  /**
   * One page within `bounds`, in their direction: live entries only, at most `maxItems`, and their
   * bytes (by `bytesOf`) within the 2 MiB page cap, except that a page always takes its first entry.
   */
  page(bounds: KeyBounds, maxItems: number, now: number, bytesOf: ItemBytes): EntryPage {
    const [lo, hi] = this.span(bounds);
    const entries: MemoryEntry[] = [];
    let bytes = 0;
    const step = bounds.reverse ? -1 : 1;
    for (let i = bounds.reverse ? hi - 1 : lo; i >= lo && i < hi; i += step) {
      const e = this.entries[i];
      if (expired(e, now) || !inBounds(e.key, bounds)) continue;
      const size = bytesOf(e);
      // A live entry that does not fit: the page is complete and something follows.
      if (entries.length >= maxItems || (entries.length > 0 && bytes + size > MAX_ITERATOR_PAGE_BYTES)) return { entries, done: false };
      entries.push(e);
      bytes += size;
    }
    return { entries, done: true };
  }

  /** Live entries after `after` (all when undefined), in key order. */
  liveAfter(after: Buffer | undefined, now: number): MemoryEntry[] {
    const start = after === undefined ? 0 : this.upperIndex(after);
    return this.entries.slice(start).filter((e) => !expired(e, now));
  }

  /** The index range [lo, hi) that may hold keys within `bounds` (by prefix, from / to and the resume point). */
  private span(b: KeyBounds): [number, number] {
    let lo = 0;
    let hi = this.entries.length;
    if (b.prefix.length > 0) {
      lo = this.lowerIndex(b.prefix);
      const end = prefixSuccessor(b.prefix);
      if (end) hi = this.lowerIndex(end);
    }
    if (b.from.length > 0) lo = Math.max(lo, this.lowerIndex(b.from));
    if (b.to.length > 0) hi = Math.min(hi, this.upperIndex(b.to));
    if (b.after && b.reverse) hi = Math.min(hi, this.lowerIndex(b.after));
    else if (b.after) lo = Math.max(lo, this.upperIndex(b.after));
    return [lo, Math.max(lo, hi)];
  }

  /** Index of `key`, or -(insertion point) - 1. */
  private indexOf(key: Buffer): number {
    const i = this.lowerIndex(key);
    return i < this.entries.length && Buffer.compare(this.entries[i].key, key) === 0 ? i : -i - 1;
  }

  /** The first index whose key is ≥ `key`. */
  private lowerIndex(key: Buffer): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.entries[mid].key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The first index whose key is > `key`. */
  private upperIndex(key: Buffer): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.entries[mid].key, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
