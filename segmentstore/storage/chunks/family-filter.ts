/**
 * Which keyed families may exist, for the writers of an engine (family-store.ts): a Bloom filter of
 * family prefixes, so that a write into a family that surely does not exist yet — every new page or
 * document is one — skips LevelDB's exact get of the family's first chunk (a miss that LevelDB's own
 * filters answer, but one that still costs ~6 µs of the event loop: memtable, every level's filter,
 * the call into the addon).
 *
 * A Bloom filter never answers "absent" for a member. It learns the families LevelDB holds from one
 * scan of their first chunks after the engine opens ({@link FamilyFilter.learn}; until it is done
 * every family may exist), and every family a write names from then on ({@link FamilyFilter.add},
 * called before the write is staged). So a family that exists — in LevelDB, or staged — is always
 * a member; a family that never had a write is absent but for the filter's false positives (which
 * only cost the get it would have made anyway). Removed families stay members: removals never make
 * a write skip a read it needs. The filter's size is fixed, so its false positives grow with the
 * families a store holds (~0.05% at 1,000,000, ~2% at 2,000,000, a get for almost every new family
 * past ~10,000,000); it never answers wrongly.
 */
import type { ClassicLevel } from 'classic-level';

/** Bits of the filter: 2^24. */
const FILTER_BITS = 1 << 24;
/** The filter's memory: 2 MiB, whatever the store holds. */
export const FAMILY_FILTER_BYTES = FILTER_BITS / 8;
/** Bits set per member. */
const HASHES = 7;
/** Keys read per step of the scan. */
const SCAN_BATCH = 256;
/** `F` (0x46), the byte after the segment id in a family chunk's key (key-codec.ts). */
const DATA_FAMILY = 0x46;

/** Bloom filter of the family prefixes (latin1 ids, key-codec.ts's familyPrefix) of one engine. */
export class FamilyFilter {
  private readonly words = new Uint32Array(FILTER_BITS / 32);
  private learnt = false;
  private stopped = false;

  /** True once the filter holds every family of LevelDB (the scan of {@link learn} done). */
  get ready(): boolean {
    return this.learnt;
  }

  /** True when the family with prefix id `id` has surely never been written (false until ready). */
  absent(id: string): boolean {
    if (!this.learnt) return false;
    let h1 = hash1(id);
    const h2 = hash2(id) | 1;
    for (let i = 0; i < HASHES; i++) {
      const bit = h1 & (FILTER_BITS - 1);
      if ((this.words[bit >>> 5] & (1 << (bit & 31))) === 0) return true;
      h1 = (h1 + h2) >>> 0;
    }
    return false;
  }

  /** Makes `id` a member (before a write of the family is staged). */
  add(id: string): void {
    let h1 = hash1(id);
    const h2 = hash2(id) | 1;
    for (let i = 0; i < HASHES; i++) {
      const bit = h1 & (FILTER_BITS - 1);
      this.words[bit >>> 5] |= 1 << (bit & 31);
      h1 = (h1 + h2) >>> 0;
    }
  }

  /**
   * Adds every family whose first chunk LevelDB holds in the segments with data prefixes
   * `dataPrefixes`, then marks the filter ready. Call once the engine is open: a family created
   * meanwhile is added by its write. Rejects (and stays not ready) when LevelDB closes under it.
   */
  async learn(db: ClassicLevel<Buffer, Buffer>, dataPrefixes: readonly Buffer[]): Promise<void> {
    for (const dataPrefix of dataPrefixes) {
      const gte = Buffer.concat([dataPrefix, Buffer.of(DATA_FAMILY)]);
      const lt = Buffer.concat([dataPrefix, Buffer.of(DATA_FAMILY + 1)]);
      const keys = db.keys({ gte, lt, keyEncoding: 'buffer' });
      try {
        for (;;) {
          if (this.stopped) return;
          const batch = await keys.nextv(SCAN_BATCH);
          if (batch.length === 0) break;
          // A family's first chunk is stored under the family's prefix itself: d | segment | F | length | family.
          for (const key of batch) if (key.length === 12 + key.readUInt16BE(10)) this.add(key.toString('latin1'));
        }
      } finally {
        await keys.close();
      }
    }
    this.learnt = true;
  }

  /** Ends a scan of {@link learn} at its next step (the engine closes); the filter stays not ready. */
  stop(): void {
    this.stopped = true;
  }
}

/** FNV-1a over the id's latin1 code units. */
function hash1(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A second, independent hash: a multiply-xorshift over the id's code units from the other end. */
function hash2(id: string): number {
  let h = 0x9e3779b9 ^ id.length;
  for (let i = id.length - 1; i >= 0; i--) {
    h = Math.imul(h ^ id.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  return h >>> 0;
}
