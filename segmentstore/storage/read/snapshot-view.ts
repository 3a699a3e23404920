/**
 * A read-only view of LevelDB at one explicit snapshot: what iterators, scans and counts read, so
 * that every LevelDB read of one page (a reverse seek for the start chunk, then the records after it)
 * sees one and the same state, and that state is one an apply never leaves half-done (the log applier
 * hands the snapshots out; see LogApplier.snapshot).
 */
import type { ClassicLevel } from 'classic-level';

/** The engine's LevelDB. */
export type Db = ClassicLevel<Buffer, Buffer>;
/** An explicit LevelDB snapshot (close it when done). */
export type Snapshot = ReturnType<Db['snapshot']>;
/** Bounds of a LevelDB range read. */
export type Range = { gt?: Buffer; gte?: Buffer; lt?: Buffer; lte?: Buffer };

/** LevelDB as of one snapshot. */
export class SnapshotView {
  constructor(
    private readonly db: Db,
    readonly snapshot: Snapshot,
  ) {}

  /** Records in `range` (in its direction), as buffers. */
  iterator(range: Range & { reverse?: boolean; limit?: number }) {
    return this.db.iterator({ ...range, keyEncoding: 'buffer', valueEncoding: 'buffer', snapshot: this.snapshot });
  }

  /** Keys in `range` (in its direction), as buffers. */
  keys(range: Range & { reverse?: boolean; limit?: number }) {
    return this.db.keys({ ...range, keyEncoding: 'buffer', snapshot: this.snapshot });
  }

  /** Releases the snapshot. */
  close(): Promise<void> {
    return this.snapshot.close();
  }
}

/**
 * The records under `keys` (undefined: none) at `snapshot`, or now when there is none, read with
 * LevelDB's synchronous get on the event loop, as a family's directory is (directory-loader.ts): a
 * record in LevelDB's block cache or the page cache costs a few microseconds, where a getMany's trip
 * through LevelDB's thread pool cost a store ~5 µs more CPU per point get and a wait for the pool and
 * the loop (W2: 19.5 → 14.8 µs of each store's CPU per get, +13% gets/s). The cost: a block that must
 * come from the disk stalls the event loop for that read. Gets use it, and family pages for their
 * first read (at most 8 records; family-page-reader.ts); a page's further chunks are read with
 * getMany, off the event loop: read synchronously they gained nothing on W5 (0.995×), and a page may
 * read up to 64 chunks. Read in the synchronous pass that located them, the records need no snapshot
 * (point-reader.ts).
 */
export function readRecords(db: Db, keys: readonly Buffer[], snapshot: Snapshot | undefined): (Buffer | undefined)[] {
  // Options name the encodings the database already has, or are left out: abstract-level copies an
  // options object that lacks them, with every call — { snapshot } cost a read ~4.5 µs of CPU on top of
  // LevelDB's ~2.5 µs (in-process, a record in the block cache).
  const records = new Array<Buffer | undefined>(keys.length);
  if (snapshot === undefined) for (let i = 0; i < keys.length; i++) records[i] = db.getSync(keys[i]);
  else {
    const options = { keyEncoding: 'buffer', valueEncoding: 'buffer', snapshot } as const;
    for (let i = 0; i < keys.length; i++) records[i] = db.getSync(keys[i], options);
  }
  return records;
}
