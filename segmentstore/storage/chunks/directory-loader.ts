/**
 * Reading a keyed family's chunk keys (its directory) from LevelDB, for its writers (family-store.ts).
 *
 * A family's first chunk is stored under the family's prefix itself, and exists exactly while the
 * family holds a chunk (family-stager.ts removes it only with the last one). So one exact get tells
 * whether a family exists, through LevelDB's bloom filters, without the seek across every level that
 * an iterator needs; and a first chunk marked sole (chunk-codec.ts) is the whole family. Only a
 * family of several chunks (or one written before the mark) is read with an iterator.
 *
 * Records are read with LevelDB's synchronous get, on the event loop: a get that the bloom filters
 * answer (a new family) costs a few microseconds, and one that reads a block reads it from LevelDB's
 * block cache or the page cache, while a trip through LevelDB's thread pool costs this machine
 * ~20 µs of the event loop's time to queue and complete, and the update a wait for its turn to stage.
 * The cost: a block that must come from the disk stalls the event loop for that read.
 */
import type { ClassicLevel } from 'classic-level';
import { isSoleChunk } from './chunk-codec';
import { prefixSuccessor } from '../key-codec';

/** A family of at most this many chunks is loaded with its records in one read. */
const SMALL_FAMILY_CHUNKS = 4;

/** What a load found: the family's chunk keys, and the records read with them (by key). */
export interface LoadedFamily {
  keys: Buffer[];
  records: (readonly [Buffer, Buffer])[];
}

/** Loads directories from one LevelDB. */
export class DirectoryLoader {
  constructor(private readonly db: ClassicLevel<Buffer, Buffer>) {}

  /** The chunk record stored under `key` now (undefined: none); the first chunk of the family at `prefix` is the record under `prefix`. */
  read(key: Buffer): Buffer | undefined {
    return this.db.getSync(key);
  }

  /**
   * The directory of the family at `prefix` whose first chunk is `head` (as read by {@link read},
   * current): none, the first chunk alone, or the keys read by an iterator (with the records of a
   * small family). The caller makes sure LevelDB holds every write of the family.
   */
  async load(prefix: Buffer, head: Buffer | undefined): Promise<LoadedFamily> {
    if (head === undefined) return { keys: [], records: [] };
    if (isSoleChunk(head)) return { keys: [prefix], records: [[prefix, head]] };
    const range = { gte: prefix, lt: prefixSuccessor(prefix), keyEncoding: 'buffer' } as const;
    const small = await this.db.iterator({ ...range, valueEncoding: 'buffer', limit: SMALL_FAMILY_CHUNKS + 1 }).all();
    if (small.length <= SMALL_FAMILY_CHUNKS) return { keys: small.map(([key]) => key), records: small };
    return { keys: await this.db.keys(range).all(), records: [] };
  }
}
