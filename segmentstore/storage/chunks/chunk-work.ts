/** Applying an update to the entries of one chunk (see family-stager.ts). */
import { ChunkEntry, chunkCount, decodeChunk, lastLiveKey } from './chunk-codec';

/**
 * The entries of one chunk while an update is applied, by latin1 key. The Map keeps insertion order
 * and replacing keeps a slot, so it is usually still in key order at the end (appends, overwrites).
 *
 * A family growing at its end only ever appends to its last chunk: until something needs a lookup
 * below the old last key, the old entries stay encoded in their record (no Map, no key strings) and
 * the new ones are kept in a list.
 */
export class ChunkWork {
  private map: Map<string, ChunkEntry> | undefined;
  private readonly record: Buffer | null;
  private readonly lastId: string | undefined;
  /** Entries put past `lastId` while the old ones are still encoded, ascending. */
  private readonly tail: ChunkEntry[] = [];
  private tailId: string | undefined;
  changed = false;
  /** No key was inserted before the old last key (see splitChunk's `appended`). */
  appendedOnly = true;

  /** Entries expired by `now` are left out (they are absent, and rewriting the chunk drops them). */
  constructor(
    record: Buffer | null,
    private readonly now: number,
  ) {
    const last = record ? lastLiveKey(record, now) : undefined;
    if (last === null) {
      // Something in it has expired: read it all now, leaving those out.
      this.record = record;
      this.lastId = this.materialize().lastId;
      return;
    }
    this.record = record;
    this.lastId = last?.toString('latin1');
  }

  private materialize(): { map: Map<string, ChunkEntry>; lastId: string | undefined } {
    if (this.map) return { map: this.map, lastId: this.lastId };
    const map = new Map<string, ChunkEntry>();
    let last: string | undefined;
    if (this.record) {
      for (const e of decodeChunk(this.record)) {
        if (e.expiresAt !== 0 && e.expiresAt <= this.now) {
          this.changed = true;
          continue;
        }
        last = e.key.toString('latin1');
        map.set(last, e);
      }
    }
    for (const e of this.tail) map.set(e.key.toString('latin1'), e);
    this.tail.length = 0;
    this.map = map;
    return { map, lastId: last };
  }

  get(id: string): ChunkEntry | undefined {
    if (!this.map && (this.lastId === undefined || id > this.lastId) && this.tail.length === 0) return undefined;
    return this.materialize().map.get(id);
  }

  put(id: string, e: ChunkEntry): void {
    this.changed = true;
    if (!this.map && (this.lastId === undefined || id > this.lastId) && (this.tailId === undefined || id > this.tailId)) {
      this.tail.push(e);
      this.tailId = id;
      return;
    }
    const map = this.materialize().map;
    const had = map.has(id);
    map.set(id, e);
    if (!had && this.lastId !== undefined && id <= this.lastId) this.appendedOnly = false;
  }

  remove(id: string): void {
    if (this.materialize().map.delete(id)) this.changed = true;
  }

  removeWhere(doomed: (e: ChunkEntry) => boolean): void {
    const map = this.materialize().map;
    for (const [id, e] of map) {
      if (doomed(e)) {
        map.delete(id);
        this.changed = true;
      }
    }
  }

  /**
   * True when `piece` is exactly the chunk as it was stored (appends only, and they all went to later
   * pieces): then the record need not be written again (a full chunk followed by large appended
   * values, like page revisions, would otherwise be rewritten with every append).
   */
  unchanged(piece: readonly ChunkEntry[]): boolean {
    if (this.map || !this.record) return false;
    const count = chunkCount(this.record);
    return count > 0 && piece.length === count && piece[count - 1].source === this.record;
  }

  /** True when the chunk holds no entry. */
  empty(): boolean {
    if (this.map) return this.map.size === 0;
    return this.tail.length === 0 && (!this.record || chunkCount(this.record) === 0);
  }

  /** The entries in ascending key order. */
  sorted(): ChunkEntry[] {
    if (!this.map) return this.record ? decodeChunk(this.record).concat(this.tail) : this.tail.slice();
    const out = new Array<ChunkEntry>(this.map.size);
    let n = 0;
    let previous = '';
    let inOrder = true;
    for (const [id, e] of this.map) {
      if (n > 0 && !(previous < id)) inOrder = false;
      previous = id;
      out[n++] = e;
    }
    return inOrder ? out : [...this.map.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map((kv) => kv[1]);
  }
}
