/**
 * The directory of one keyed family as its writers see it: the sorted storage keys of its chunks as
 * staged (see family-store.ts).
 */
import { compareRanges } from './chunk-codec';
import type { SegmentState } from '../segments/segment-state';

/**
 * The chunks of one family, as staged: their storage keys and, for searching, their lower user keys
 * as latin1 strings (JS string order on latin1 is unsigned bytewise order, and much cheaper than
 * comparing Buffers).
 */
export class FamilyDirectory {
  /** Updates staged into this directory whose batch has not settled. */
  pending = 0;
  /** Updates between reading and staging that hold this directory. */
  users = 0;
  /** False once a failed flush made it untrustworthy. */
  valid = true;
  readonly lowers: string[];

  constructor(
    readonly seg: SegmentState,
    readonly prefix: Buffer,
    readonly keys: Buffer[],
  ) {
    this.lowers = keys.map((k) => k.toString('latin1', prefix.length));
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
    this.keys.splice(at, 0, key);
    this.lowers.splice(at, 0, key.toString('latin1', this.prefix.length));
  }

  remove(at: number): void {
    this.keys.splice(at, 1);
    this.lowers.splice(at, 1);
  }

  /** Memory held, roughly: the keys plus a fixed cost per key and per directory. */
  bytes(): number {
    return 64 + this.keys.length * (2 * this.prefix.length + 64);
  }
}
