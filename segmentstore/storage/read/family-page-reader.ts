/**
 * Iterator pages of one keyed family, for `SegmentEngine.iterateInto`, read the way point reads are
 * (point-reader.ts): the chunks the page walks are located synchronously, in memory (a staged or
 * cached record, the family's directory) or as LevelDB records to read by their exact keys, and
 * those are read in the same instant: the first read in the same synchronous pass, the others from
 * one explicit LevelDB snapshot taken in it. So a page answers
 * the state at that instant without waiting for the durable log's apply and without an iterator's
 * seek through LevelDB's levels: a recently written family (its directory and chunks in memory)
 * answers with no LevelDB read at all. A page that used a staged write answers once its batch is
 * durable (read again if it failed), so no page tells of a write a crash could still take back.
 *
 * A family whose directory is not in memory has no write LevelDB lacks (a directory stays pinned
 * until LevelDB holds its writes), so LevelDB's records are the family: its first chunk, read with
 * LevelDB's synchronous get in the pass that located it (no snapshot, no trip through LevelDB's thread
 * pool: a one-key page, getLatest's or a document winner's, is one record), is the whole family when
 * marked sole; a family of several chunks is read with an iterator over a snapshot taken in the same
 * pass (chunk-reader.ts). Every chunk holds a live entry unless its
 * entries expired and are not swept yet, so a page first locates one chunk more than it has items
 * (the first chunk may hold only keys outside its bounds): a page of one key, getLatest's or a
 * document winner's, locates two chunks, not sixty-four (locating costs a key string and two map
 * lookups a chunk, most of such a read). If those do not fill the page, it is read again, from a new
 * instant, locating as many chunks as it has items and at least {@link PAGE_CHUNKS}; if those do not
 * either, the page is read as before, at a snapshot once LevelDB holds every write of the segment.
 * A page thus ends short only at its caps.
 *
 * The chunk records a page reads from LevelDB join the chunk cache, so that a family read often is
 * read from memory too: the page registers an overlay read in the pass that locates its chunks, so
 * every write of a chunk staged or applied since is still in the overlay when the read returns, and a
 * record the overlay holds no write of is current (FamilyStore.cacheRead).
 */
import type { ClassicLevel } from 'classic-level';
import { ErrorCodes } from '../../../proto/error-codes';
import { MAX_ITERATOR_PAGE_BYTES } from '../../../proto/limits';
import { KvtFault } from '../../../server-kit/fault';
import { isSoleChunk } from '../chunks/chunk-codec';
import type { FamilyStore, PageChunk, PageChunks, StagedBatch } from '../chunks/family-store';
import { userBounds } from '../key-range';
import type { SegmentState } from '../segments/segment-state';
import { emptyBetween, FamilyPageWalk, readFamilyPage } from './chunk-reader';
import { allDurable } from './point-reader';
import type { FamilyPageSink, PageShape, PageSinkFactory } from './page-sink';
import type { CheckedIterate } from './read-validation';
import { readRecords, SnapshotView, type Snapshot } from './snapshot-view';

/** Chunks a page locates at least when its first locating did not fill it (chunks of expired entries). */
const PAGE_CHUNKS = 64;
/** Chunk records read from LevelDB at once: bounds a page's memory (chunks hold values of up to 1 MiB). */
const READ_SLICE = 8;

/** What one attempt at a page ended with: the page, or that it must be read the slow way. */
type Attempt<P> = { page: P; waitFor: Set<StagedBatch> } | undefined;

/** Reads family pages of the segments of one engine. */
export class FamilyPageReader {
  constructor(
    private readonly db: ClassicLevel<Buffer, Buffer>,
    private readonly families: FamilyStore,
    private readonly clock: () => number,
  ) {}

  /**
   * One page of `req` (checked, a keyed family) of `seg`, made by a sink from `sinkFor`. `slow` reads
   * it the way every page was read before: at a snapshot once LevelDB holds every write of the segment.
   */
  async read<P>(seg: SegmentState, req: CheckedIterate, sinkFor: PageSinkFactory<P>, slow: () => Promise<P>): Promise<P> {
    // Updates that arrived earlier but still wait to be staged (reading first) come before this read.
    if (seg.stagingTail) await seg.stagingTail;
    const shape: PageShape = { maxItems: req.maxItems, pageBytes: MAX_ITERATOR_PAGE_BYTES, includeValues: req.includeValues };
    const wide = Math.max(PAGE_CHUNKS, req.maxItems);
    let locate = Math.min(wide, req.maxItems + 1);
    for (let failed = 0; ;) {
      const got = await this.attempt(seg, req, sinkFor(shape), () => sinkFor(shape), locate);
      if (got === undefined) {
        if (locate === wide) return slow();
        locate = wide;
        continue;
      }
      if (await allDurable(got.waitFor)) return got.page;
      if (++failed >= 3) throw new KvtFault(ErrorCodes.UNAVAILABLE, 'segment store cannot write to its storage; try again later');
    }
  }

  /** One attempt at the page from this instant, locating at most `locate` chunks (undefined: they did not fill it). */
  private async attempt<P>(seg: SegmentState, req: CheckedIterate, sink: FamilyPageSink<P>, freshSink: () => FamilyPageSink<P>, locate: number): Promise<Attempt<P>> {
    const now = this.clock();
    const { lower, upper } = userBounds(req);
    if (lower && upper && emptyBetween(lower, upper)) return { page: sink.finish(true), waitFor: new Set() };
    const walk = new FamilyPageWalk(lower, upper, now, sink);
    // Located and snapshotted in one synchronous pass: the page is the family at this instant. The
    // registration, made in the same pass, lets the chunk records read join the chunk cache.
    const token = this.families.beginChunkRead();
    try {
      const where = this.families.locatePage(seg, req.family, req.reverse ? upper?.key : lower?.key, req.reverse, locate);
      if ('headOf' in where) return await this.fromHead(seg, req, where.headOf, walk, sink, freshSink, now);
      return await this.fromChunks(req, where, walk, sink);
    } finally {
      this.families.endChunkRead(token);
    }
  }

  /** A page of a family whose directory is not in memory: its first chunk, and the rest with an iterator when it is not all. */
  private async fromHead<P>(
    seg: SegmentState,
    req: CheckedIterate,
    headOf: Buffer,
    walk: FamilyPageWalk<P>,
    sink: FamilyPageSink<P>,
    freshSink: () => FamilyPageSink<P>,
    now: number,
  ): Promise<Attempt<P>> {
    const waitFor = new Set<StagedBatch>();
    // Read in the pass that located it, with LevelDB's synchronous get: LevelDB holds the whole
    // family, and nothing can stage a write of it before the pass ends (see readRecords).
    const head = this.db.getSync(headOf);
    if (head === undefined) return { page: sink.finish(true), waitFor };
    this.families.cacheRead(headOf.toString('latin1'), head);
    if (isSoleChunk(head)) {
      (req.reverse ? walk.backwardRecord : walk.forwardRecord)(headOf, head);
      return { page: sink.finish(!walk.full), waitFor };
    }
    // Several chunks, all in LevelDB: an iterator over a snapshot taken in the same pass.
    const snapshot = this.db.snapshot();
    try {
      return { page: await readFamilyPage(new SnapshotView(this.db, snapshot), seg.dataPrefix, req, now, freshSink()), waitFor };
    } finally {
      await snapshot.close();
    }
  }

  /** A page of the chunks located (see FamilyStore.locatePage), those memory lacks read from one snapshot. */
  private async fromChunks<P>(req: CheckedIterate, where: PageChunks, walk: FamilyPageWalk<P>, sink: FamilyPageSink<P>): Promise<Attempt<P>> {
    const visit = req.reverse ? walk.backwardRecord : walk.forwardRecord;
    const waitFor = new Set<StagedBatch>();
    if (where.emptied) waitFor.add(where.emptied);
    const { chunks } = where;
    // Each chunk holds a live entry unless its entries expired, so a page of n items needs about n
    // chunks: the first read takes that many (a page of one key, getLatest's, reads one record,
    // not eight), and each further read twice as many, up to READ_SLICE. The first is read in the
    // pass that located the chunks, with LevelDB's synchronous get (see readRecords); the others
    // after awaits, from a snapshot taken in that pass.
    const first = Math.max(1, Math.min(READ_SLICE, req.maxItems));
    const snapshot = chunks.some((c, i) => i >= first && c.record === undefined && !c.absent) ? this.db.snapshot() : undefined;
    try {
      for (let from = 0, size = first; from < chunks.length; from += size, size = Math.min(READ_SLICE, size * 2)) {
        const slice = chunks.slice(from, from + size);
        const records = from === 0 ? this.recordsNow(slice) : await this.records(slice, snapshot);
        for (let i = 0; i < slice.length; i++) {
          if (slice[i].staged) waitFor.add(slice[i].staged!);
          const record = records[i];
          if (record !== undefined && !visit(slice[i].key, record)) return { page: sink.finish(!walk.full), waitFor };
        }
      }
    } finally {
      await snapshot?.close();
    }
    // Chunks of expired entries kept the page from filling before the located ones ran out.
    return where.more ? undefined : { page: sink.finish(true), waitFor };
  }

  /** The records of `slice`, from memory or the snapshot (undefined: none). */
  private async records(slice: readonly PageChunk[], snapshot: Snapshot | undefined): Promise<(Buffer | undefined)[]> {
    const { out, missing } = inMemory(slice);
    if (missing.length === 0) return out;
    const read = await this.db.getMany(
      missing.map((i) => slice[i].key),
      // The encodings named, so abstract-level need not copy the options (snapshot-view.ts).
      { keyEncoding: 'buffer', valueEncoding: 'buffer', snapshot },
    );
    return this.fill(slice, out, missing, read);
  }

  /** The records of `slice`, from memory or read now, in the pass that located them (undefined: none). */
  private recordsNow(slice: readonly PageChunk[]): (Buffer | undefined)[] {
    const { out, missing } = inMemory(slice);
    if (missing.length === 0) return out;
    return this.fill(
      slice,
      out,
      missing,
      readRecords(
        this.db,
        missing.map((i) => slice[i].key),
        undefined,
      ),
    );
  }

  /** `out` with the records `read` of its `missing` chunks, which join the chunk cache. */
  private fill(slice: readonly PageChunk[], out: (Buffer | undefined)[], missing: readonly number[], read: readonly (Buffer | undefined)[]): (Buffer | undefined)[] {
    missing.forEach((i, n) => {
      const record = read[n];
      out[i] = record;
      if (record !== undefined) this.families.cacheRead(slice[i].key.toString('latin1'), record);
    });
    return out;
  }
}

/** The records of `slice` that memory has, and the indexes of those to read from LevelDB. */
function inMemory(slice: readonly PageChunk[]): { out: (Buffer | undefined)[]; missing: number[] } {
  const out = slice.map((c) => c.record);
  const missing: number[] = [];
  for (let i = 0; i < slice.length; i++) if (out[i] === undefined && !slice[i].absent) missing.push(i);
  return { out, missing };
}
