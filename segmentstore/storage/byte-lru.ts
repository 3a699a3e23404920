/**
 * A least-recently-used map bounded by the bytes its values are said to hold. Entries the owner
 * marks as pinned are never evicted (they hold state that exists nowhere else yet), and neither is
 * the entry being set or resized: its owner is using it at that moment, possibly before it could pin
 * it (a family directory is set as it is loaded for an update, and resized while the update stages).
 * So the map may stay over its budget until the next set.
 */
export class ByteLru<V> {
  private readonly map = new Map<string, { value: V; bytes: number }>();
  private total = 0;

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

  /** The value of `key`, marking it recently used. */
  get(key: string): V | undefined {
    const slot = this.map.get(key);
    if (!slot) return undefined;
    this.map.delete(key);
    this.map.set(key, slot);
    return slot.value;
  }

  /** The value of `key` without touching its recency. */
  peek(key: string): V | undefined {
    return this.map.get(key)?.value;
  }

  set(key: string, value: V, bytes: number): void {
    const old = this.map.get(key);
    if (old) {
      this.total -= old.bytes;
      this.map.delete(key);
    }
    this.map.set(key, { value, bytes });
    this.total += bytes;
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

  delete(key: string): void {
    const old = this.map.get(key);
    if (!old) return;
    this.total -= old.bytes;
    this.map.delete(key);
  }

  /** Drops every entry whose key starts with `prefix`. */
  deletePrefix(prefix: string): void {
    for (const key of [...this.map.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }

  /** Every value, least recently used first. */
  *values(): IterableIterator<V> {
    for (const slot of this.map.values()) yield slot.value;
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }

  /** Evicts least recently used entries, except pinned ones and `keep`, until within the budget. */
  private evict(keep: string): void {
    if (this.total <= this.budget) return;
    for (const [key, slot] of this.map) {
      if (this.total <= this.budget) return;
      if (key === keep || this.pinned(slot.value)) continue;
      this.total -= slot.bytes;
      this.map.delete(key);
    }
  }
}
