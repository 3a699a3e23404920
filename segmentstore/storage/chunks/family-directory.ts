/**
 * The directory of one keyed family as its writers see it: the sorted storage keys of its chunks as
 * staged (see family-store.ts).
 */
import { compareRanges } from './chunk-codec';
import type { SegmentState } from '../segments/segment-state';

/** The cache a directory lives in (a ByteLru of directories). */
export interface DirectoryCache {
  peek(key: string): FamilyDirectory | undefined;
  hold(key: string): void;
  release(key: string): void;
}

/** What a cached directory holds beside its chunks' keys (see {@link FamilyDirectory.bytes}). */
const DIRECTORY_OVERHEAD_BYTES = 300;
/** What each chunk adds beside its key's bytes: the key's Buffer object and array slots, the lower key's string header. */
const CHUNK_KEY_OVERHEAD_BYTES = 130;

/** What one chunk's key holds in a directory: its Buffer and its lower key's string. */
function keyCharge(key: Buffer, prefix: Buffer): number {
  return CHUNK_KEY_OVERHEAD_BYTES + key.length + (key.length - prefix.length);
}

/**
 * The chunks of one family, as staged: their storage keys and, for searching, their lower user keys
 * as latin1 strings (JS string order on latin1 is unsigned bytewise order, and much cheaper than
 * comparing Buffers).
 */
export class FamilyDirectory {
  /** Updates staged into this directory whose batch has not settled. */
  private pending = 0;
  /** Updates between reading and staging that hold this directory. */
  private users = 0;
  /** False once a failed flush made it untrustworthy. */
  valid = true;
  lowers: string[];
  /** What the chunks' keys hold (see {@link bytes}), kept up to date as chunks come and go. */
  private keyBytes = 0;

  /**
   * @param id the prefix's latin1 form: the directory's key in `cache`
   * @param cache where the directory is cached: held there (never evicted) while an update holds it or
   * LevelDB lacks a write staged into it, since a directory loaded again from LevelDB would miss it
   */
  constructor(
    readonly seg: SegmentState,
    readonly prefix: Buffer,
    public keys: Buffer[],
    readonly id: string,
    private readonly cache: DirectoryCache,
  ) {
    this.lowers = keys.map((k) => k.toString('latin1', prefix.length));
    for (const k of keys) this.keyBytes += keyCharge(k, prefix);
  }

  /** An update holds this directory from its load until it has staged (or failed). */
  addUser(): void {
    this.pin(+1, 0);
  }

  removeUser(): void {
    this.pin(-1, 0);
  }

  /** An update was staged into this directory; {@link settle} once LevelDB holds its batch (or never will). */
  addPending(): void {
    this.pin(0, +1);
  }

  settle(): void {
    this.pin(0, -1);
  }

  /** Holds the directory in its cache while anything pins it, releases it when the last pin goes. */
  private pin(users: number, pending: number): void {
    const before = this.users + this.pending;
    this.users += users;
    this.pending += pending;
    const after = this.users + this.pending;
    if ((before === 0) === (after === 0) || this.cache.peek(this.id) !== this) return;
    if (after > 0) this.cache.hold(this.id);
    else this.cache.release(this.id);
  }

  /** Index of the chunk holding the key whose latin1 form is `id` (the greatest lower key <= it); -1 when the family is empty. */
  floor(id: string): number {
    return this.lastWhere((c) => this.lowers[c] <= id);
  }

  /** True when chunk `c`'s lower key is at most the user key `source[start, end)`. */
  startsAtOrBelow(c: number, source: Buffer, start: number, end: number): boolean {
    const k = this.keys[c];
    return compareRanges(k, this.prefix.length, k.length, source, start, end) <= 0;
  }

  /** {@link floor} for the user key `source[start, end)`. */
  floorKey(source: Buffer, start: number, end: number): number {
    return this.lastWhere((c) => this.startsAtOrBelow(c, source, start, end));
  }

  /** The last chunk index for which `atOrBelow` holds (it holds for a prefix of the chunks); -1 for none. */
  private lastWhere(atOrBelow: (c: number) => boolean): number {
    let lo = 0;
    let hi = this.keys.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (atOrBelow(mid)) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** True when chunk `c` holds `id` (a cheap check before searching). */
  holds(c: number, id: string): boolean {
    return c >= 0 && c < this.lowers.length && this.lowers[c] <= id && (c + 1 === this.lowers.length || id < this.lowers[c + 1]);
  }

  insert(at: number, key: Buffer): void {
    const lower = key.toString('latin1', this.prefix.length);
    this.keyBytes += keyCharge(key, this.prefix);
    if (this.keys.length === 0) {
      // A new family's first chunk: arrays of exactly one slot (growing an empty array reserves 17).
      this.keys = [key];
      this.lowers = [lower];
      return;
    }
    this.keys.splice(at, 0, key);
    this.lowers.splice(at, 0, lower);
  }

  remove(at: number): void {
    this.keyBytes -= keyCharge(this.keys[at], this.prefix);
    this.keys.splice(at, 1);
    this.lowers.splice(at, 1);
  }

  /**
   * Memory held, about: the object, its two arrays and its cache slot, map entry and key string, and per
   * chunk its key (a Buffer) and lower key (a string); calibrated with V8's heap statistics (a
   * directory of one chunk, as most families have, holds ~450 bytes).
   */
  bytes(): number {
    return DIRECTORY_OVERHEAD_BYTES + this.prefix.length + this.keyBytes;
  }
}
