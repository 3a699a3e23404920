/**
 * A least-recently-used map bounded by the bytes its values are said to hold. Entries the owner
 * holds ({@link ByteLru.hold}) or marks as pinned are never evicted (they hold state that exists
 * nowhere else yet), and neither is the entry being set or resized: its owner is using it at that
 * moment, possibly before it could hold it (a family directory is set as it is loaded for an update,
 * and resized while the update stages). So the map may stay over its budget until the next set, or
 * while more than the budget is held.
 *
 * The recency order is a doubly linked list beside a Map, not the Map's own insertion order: a Map
 * that is used as the order (delete and set again to touch, evict from its first entry) leaves a
 * deleted slot behind every touch and eviction until it is rehashed, and every new iteration from
 * its start walks over those slots again, so each eviction cost time in proportion to the entries
 * evicted since the last rehash. A held entry leaves the list until it is released, so an eviction
 * never walks past it (a burst of new families keeps tens of thousands of directories held, more
 * than the budget, until LevelDB has their writes).
 */
/** What a cache holds and how its lookups went. */
export interface CacheStats {
  /** Lookups that found their key, since the cache was made. */
  hits: number;
  /** Lookups that did not. */
  misses: number;
  /** Bytes its entries are charged. */
  bytes: number;
  entries: number;
  budgetBytes: number;
}

/** Most pinned entries one set or resize walks past to evict (see ByteLru.evict). */
const PINNED_SKIPS = 64;

interface Slot<V> {
  readonly key: string;
  value: V;
  bytes: number;
  /** Out of the recency list until released (see ByteLru.hold). */
  held: boolean;
  /** Less recently used neighbour (toward the head). */
  older: Slot<V> | undefined;
  /** More recently used neighbour (toward the tail). */
  newer: Slot<V> | undefined;
}

export class ByteLru<V> {
  private readonly map = new Map<string, Slot<V>>();
  /** The least recently used slot that is not held. */
  private head: Slot<V> | undefined;
  /** The most recently used slot that is not held. */
  private tail: Slot<V> | undefined;
  private total = 0;
  /** Lookups ({@link get}, {@link find}) that found their key, and those that did not; {@link peek} is not counted. */
  private counted = { hits: 0, misses: 0 };

  /** @param pinned entries for which it is true are walked past by evictions (prefer {@link hold}, which costs evictions nothing) */
  constructor(
    private readonly budget: number,
    private readonly pinned: (value: V) => boolean = () => false,
  ) {}

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.map.size;
  }

  /** What it holds and how its lookups went (for the store's metrics). */
  get stats(): CacheStats {
    return { hits: this.counted.hits, misses: this.counted.misses, bytes: this.total, entries: this.map.size, budgetBytes: this.budget };
  }

  /** The value of `key`, marking it recently used. */
  get(key: string): V | undefined {
    const slot = this.map.get(key);
    if (!slot) {
      this.counted.misses++;
      return undefined;
    }
    this.counted.hits++;
    if (!slot.held) this.toTail(slot);
    return slot.value;
  }

  /** The value of `key` without touching its recency, counted as a lookup (unlike {@link peek}). */
  find(key: string): V | undefined {
    const slot = this.map.get(key);
    if (slot) this.counted.hits++;
    else this.counted.misses++;
    return slot?.value;
  }

  /** The value of `key` without touching its recency. */
  peek(key: string): V | undefined {
    return this.map.get(key)?.value;
  }

  set(key: string, value: V, bytes: number): void {
    const old = this.map.get(key);
    if (old) {
      this.total += bytes - old.bytes;
      old.value = value;
      old.bytes = bytes;
      // A new value is not held: whoever held the old one releases that one, not this.
      if (old.held) {
        old.held = false;
        this.link(old);
      } else this.toTail(old);
    } else {
      const slot: Slot<V> = { key, value, bytes, held: false, older: undefined, newer: undefined };
      this.link(slot);
      this.map.set(key, slot);
      this.total += bytes;
    }
    this.evict(key);
  }

  /** Re-states the size of an entry whose value grew or shrank in place. */
  resize(key: string, bytes: number): void {
    const slot = this.map.get(key);
    if (!slot) return;
    this.total += bytes - slot.bytes;
    slot.bytes = bytes;
    this.evict(key);
  }

  /** Keeps `key` from eviction until {@link release}d; its bytes still count. */
  hold(key: string): void {
    const slot = this.map.get(key);
    if (!slot || slot.held) return;
    this.unlink(slot);
    slot.held = true;
  }

  /** Makes a held `key` evictable again, as the most recently used. */
  release(key: string): void {
    const slot = this.map.get(key);
    if (!slot || !slot.held) return;
    slot.held = false;
    this.link(slot);
    this.evict(key);
  }

  delete(key: string): void {
    const slot = this.map.get(key);
    if (!slot) return;
    this.remove(slot);
  }

  /** Drops every entry whose key starts with `prefix`. */
  deletePrefix(prefix: string): void {
    for (const slot of [...this.map.values()]) if (slot.key.startsWith(prefix)) this.remove(slot);
  }

  /** Every value: those not held least recently used first, then the held ones. */
  *values(): IterableIterator<V> {
    for (let slot = this.head; slot; slot = slot.newer) yield slot.value;
    for (const slot of this.map.values()) if (slot.held) yield slot.value;
  }

  clear(): void {
    this.map.clear();
    this.head = this.tail = undefined;
    this.total = 0;
  }

  /** Puts `slot` (not in the list) at the tail. */
  private link(slot: Slot<V>): void {
    slot.older = this.tail;
    slot.newer = undefined;
    if (this.tail) this.tail.newer = slot;
    else this.head = slot;
    this.tail = slot;
  }

  private unlink(slot: Slot<V>): void {
    if (slot.older) slot.older.newer = slot.newer;
    else this.head = slot.newer;
    if (slot.newer) slot.newer.older = slot.older;
    else this.tail = slot.older;
    slot.older = slot.newer = undefined;
  }

  private toTail(slot: Slot<V>): void {
    if (slot === this.tail) return;
    this.unlink(slot);
    this.link(slot);
  }

  private remove(slot: Slot<V>): void {
    if (!slot.held) this.unlink(slot);
    this.map.delete(slot.key);
    this.total -= slot.bytes;
  }

  /**
   * Evicts least recently used entries until within the budget, except `keep`, held and pinned
   * ones; a pinned one is moved to the tail (it is in use). At most {@link PINNED_SKIPS} pinned
   * entries are walked past per call, so that a map with more than its budget pinned does not make
   * each set cost their number.
   */
  private evict(keep: string): void {
    let skips = Math.min(this.map.size, PINNED_SKIPS);
    for (let slot = this.head; slot && this.total > this.budget && skips > 0;) {
      const next = slot.newer;
      if (slot.key === keep) skips--;
      else if (this.pinned(slot.value)) {
        skips--;
        this.toTail(slot);
      } else this.remove(slot);
      slot = next;
    }
  }
}
