/**
 * The table-segment engine: every segment of one segment store in ONE LevelDB (classic-level).
 *
 * Semantics (DESIGN §2): an Update is one atomic batch of PUT / INSERT / REMOVE / REMOVE_RANGE within
 * one key family; its conditions are all checked against the state before the batch, then all of it
 * is applied or none. Versions are (segment id, sequence) with a per-segment u64 sequence that is
 * strictly increasing and persisted in the same LevelDB batch as the data. Conditional checks and
 * reads see every update staged before them, including ones still waiting in the group commit.
 * Updates resolve only once their batch was written with `sync: true`.
 *
 * Lifecycle: `opening → open → closing → closed`; close finishes the flush in progress and closes
 * LevelDB (which closes open iterators). The engine has no gRPC imports and logs nothing.
 */
import { ClassicLevel } from 'classic-level';
import { ErrorCodes } from '../../proto/error-codes';
import { MAX_GET_ANSWER_BYTES, MAX_ITERATOR_PAGE_BYTES } from '../../proto/limits';
import type { GetResponse, IterateResponse, ScanResponse, SegmentInfo } from '../../proto/messages';
import { errorMessage, KvtFault } from '../../proto/runtime/status';
import { ExpirySweeper } from './expiry-sweeper';
import { CommitBatch, GroupCommitter } from './group-commit';
import { Overlay } from './overlay';
import { countSegment, readFamilyPage, readScanPage } from './chunk-reader';
import { FamilyStore } from './family-store';
import { readPage } from './page-reader';
import { BytePool, FamilyPageSink, ObjectPageSink, PageCaps, WirePageSink } from './page-sink';
import { PointReader } from './point-reader';
import { SegmentCatalog } from './segment-catalog';
import { checkFormat } from './storage-format';
import { DEFAULT_WRITE_BUFFER_BYTES, EngineState, SegmentEngineOptions, SegmentState } from './segment-state';
import { needsRead, readForUpdate, StageContext, StagedUpdate, stageUpdate, storageKeys, UpdateKeys, UpdateOutcome } from './update-stager';
import { ascendingKeys } from './chunk-merge';
import { CheckedIterate, checkGetKeys, checkIterate, checkScan, IterateInput, ScanInput } from './read-validation';
import { StoreClock } from './store-clock';
import { CheckedModification, checkDuplicates, checkModifications, checkSegmentId, ModificationInput } from './validation';

/** An Update as callers may send it (proto defaults apply to omitted fields). */
export interface UpdateInput {
  segmentId?: string;
  modifications?: ModificationInput[];
}

/** A Get as callers may send it. */
export interface GetInput {
  segmentId?: string;
  keys?: { family?: string; key?: Uint8Array }[];
}

/** Thrown by {@link SegmentEngine.open} when another process holds the LevelDB lock. */
export class StorageLockedError extends Error {
  override readonly name = 'StorageLockedError';
  readonly code = 'LEVEL_LOCKED';
  constructor(readonly location: string, options?: { cause?: unknown }) {
    super(`${location} is in use by another process`, options);
  }
}

/** The "batch" of an empty update: nothing to write, already durable. */
const NOTHING_TO_COMMIT = new CommitBatch();
NOTHING_TO_COMMIT.resolve();

function isLocked(err: unknown): boolean {
  for (let e = err as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'LEVEL_LOCKED') return true;
  }
  return false;
}

/**
 * The caps of the Gets of one answer (see GetResponse in segmentstore.proto): any number of entries
 * within MAX_GET_ANSWER_BYTES of keys and values (and within what `pool` has left: an ExecuteStream's
 * answers share one), the first always (so every answer makes progress). An entry refused ends its
 * Get's answer at the keys before it.
 */
export function getAnswerCaps(pool?: BytePool): PageCaps {
  return new PageCaps(Infinity, MAX_GET_ANSWER_BYTES, pool);
}

/** Table segments on one LevelDB. Create with {@link SegmentEngine.open}. */
export class SegmentEngine {
  private stateName: EngineState = 'opening';
  private readonly overlay = new Overlay();
  private readonly committer: GroupCommitter;
  private readonly sweeper: ExpirySweeper;
  private readonly catalog: SegmentCatalog;
  private readonly families: FamilyStore;
  private readonly points: PointReader;
  private readonly ctx: StageContext;
  /** The store's clock for expiry, which never goes back (store-clock.ts). */
  private readonly storeClock: StoreClock;
  private closed: Promise<void> = Promise.resolve();

  private constructor(readonly location: string, private readonly db: ClassicLevel<Buffer, Buffer>, options: SegmentEngineOptions) {
    this.storeClock = new StoreClock(options.clock ?? Date.now);
    const clock = this.storeClock.now;
    this.committer = new GroupCommitter(db, this.overlay, options.maxFlushOps, options.maxHoldMs);
    this.catalog = new SegmentCatalog(db);
    this.ctx = { db, overlay: this.overlay, committer: this.committer, clock };
    this.families = new FamilyStore(this.ctx, options.chunkCacheBytes, options.directoryCacheBytes);
    this.points = new PointReader(db, this.overlay, this.families, clock);
    this.committer.onCommitted = (entries) => this.families.committed(entries);
    this.committer.onFailure = (err) => {
      this.families.invalidate();
      if (this.stateName !== 'open') return;
      this.stateName = 'failed';
      options.onStorageFailure?.(err);
    };
    const onError = options.onBackgroundError ?? (() => undefined);
    this.sweeper = new ExpirySweeper(db, this.overlay, this.committer, this.storeClock, options.expirySweepBatchSize ?? 1000, (err) => onError(err, 'expiry sweep'), (segmentId, family, items) => this.expireInFamily(segmentId, family, items));
  }

  /**
   * Opens (creating if needed) the LevelDB at `location`, loads the segment records and resumes
   * interrupted deletions.
   * @throws StorageLockedError when another process has the database open.
   */
  static async open(location: string, options: SegmentEngineOptions = {}): Promise<SegmentEngine> {
    const writeBufferSize = options.writeBufferBytes ?? DEFAULT_WRITE_BUFFER_BYTES;
    const db = new ClassicLevel<Buffer, Buffer>(location, { keyEncoding: 'buffer', valueEncoding: 'buffer', writeBufferSize });
    try {
      await db.open();
    } catch (err) {
      if (isLocked(err)) throw new StorageLockedError(location, { cause: err });
      throw err;
    }
    const engine = new SegmentEngine(location, db, options);
    try {
      await checkFormat(db, location);
      await engine.storeClock.restore(db);
      await engine.catalog.load();
    } catch (err) {
      await db.close();
      throw err;
    }
    engine.stateName = 'open';
    engine.sweeper.start(options.expirySweepIntervalMs ?? 1000);
    return engine;
  }

  /** The lifecycle state. */
  get state(): EngineState {
    return this.stateName;
  }

  /** Flush statistics of the group commit. */
  get commitStats(): { flushes: number; ops: number } {
    return { ...this.committer.stats };
  }

  /**
   * Refuses new calls, lets updates already accepted finish staging and flushing, then closes
   * LevelDB (closing any open iterator). Idempotent.
   */
  async close(): Promise<void> {
    if (this.stateName === 'closing' || this.stateName === 'closed') return this.closed;
    this.stateName = 'closing';
    this.closed = (async () => {
      await this.sweeper.stop();
      await Promise.all(this.catalog.all().map((seg) => seg.stagingTail));
      await this.committer.drain();
      await this.storeClock.save(this.db, true).catch(() => undefined);
      await this.catalog.idle();
      await this.db.close();
      this.stateName = 'closed';
    })();
    return this.closed;
  }

  private assertOpen(): void {
    if (this.stateName === 'open') return;
    if (this.stateName === 'failed') {
      throw new KvtFault(ErrorCodes.UNAVAILABLE, `segment store storage failed (${errorMessage(this.committer.failure)}); restart it to recover`);
    }
    throw new KvtFault(ErrorCodes.UNAVAILABLE, `segment store is ${this.stateName}`);
  }

  private segment(segmentId: unknown): SegmentState {
    this.assertOpen();
    const id = checkSegmentId(segmentId);
    const seg = this.catalog.get(id);
    if (!seg) throw new KvtFault(ErrorCodes.SEGMENT_NOT_FOUND, `segment ${id} does not exist on this store`);
    return seg;
  }

  /** Creates a segment; false when it existed. `table` is informational ("scope/table#partition"). */
  async createSegment(segmentId: string, table = ''): Promise<boolean> {
    this.assertOpen();
    return this.catalog.create(checkSegmentId(segmentId), table, this.storeClock.now());
  }

  /** Deletes a segment and all its data; false when it did not exist. Its sequence is kept. */
  async deleteSegment(segmentId: string): Promise<boolean> {
    this.assertOpen();
    const id = checkSegmentId(segmentId);
    const seg = this.catalog.get(id);
    const deleted = await this.catalog.delete(id);
    if (seg) this.families.dropSegment(seg);
    return deleted;
  }

  /** Live entry count and key + value bytes of a segment. @throws KvtFault SEGMENT_NOT_FOUND */
  async segmentInfo(segmentId: string): Promise<SegmentInfo> {
    return this.infoOf(this.segment(segmentId));
  }

  /** Every hosted segment with its counts, in segment-id order. */
  async listSegments(): Promise<SegmentInfo[]> {
    this.assertOpen();
    const out: SegmentInfo[] = [];
    for (const seg of this.catalog.all()) out.push(await this.infoOf(seg));
    return out;
  }

  private async infoOf(seg: SegmentState): Promise<SegmentInfo> {
    await seg.lastBatch?.done.catch(() => undefined);
    const { count, bytes } = await countSegment(this.db, seg.dataPrefix, this.storeClock.now());
    return { segmentId: seg.id, entryCount: String(count), bytes: String(bytes), lastSequence: String(seg.lastSequence), table: seg.record.table };
  }

  /**
   * Applies one atomic batch; resolves once durable with the sequences it gave (see UpdateOutcome).
   * @throws KvtFault INVALID_ARGUMENT, SEGMENT_NOT_FOUND, BAD_KEY_VERSION, NO_SUCH_KEY (with index).
   */
  update(req: UpdateInput): Promise<UpdateOutcome> {
    return this.stageAndAcknowledge(req);
  }

  /** Stages `req` and resolves once it is durable; `staging` is told of a staging that waits for a read. */
  private stageAndAcknowledge(req: UpdateInput, staging?: (staged: Promise<StagedUpdate>) => void): Promise<UpdateOutcome> {
    let staged: StagedUpdate | Promise<StagedUpdate>;
    try {
      staged = this.stage(req);
    } catch (err) {
      return this.refuse(req, err);
    }
    if (!(staged instanceof Promise)) return acknowledge(staged);
    staging?.(staged);
    return staged.then(acknowledge, (err: unknown) => this.refuse(req, err));
  }

  /**
   * Rejects an update that was not staged with `err`; a failed condition only once the state it was
   * checked against is durable. Why: conditions see staged writes (DESIGN §2), and answering at once
   * would tell the caller of a write a crash can still take back (a replace refused on a version that
   * then, after a restart, is current again, with no write in between). If that write fails instead,
   * the condition was checked against a state that never was: UNAVAILABLE (nothing applied; try again).
   */
  private refuse(req: UpdateInput, err: unknown): Promise<never> {
    const code = (err as { code?: unknown })?.code;
    if (code !== ErrorCodes.BAD_KEY_VERSION && code !== ErrorCodes.NO_SUCH_KEY) return Promise.reject(err);
    // Batches flush in order, so the segment's newest batch being durable covers every staged write seen.
    const pending = this.catalog.get(String(req.segmentId))?.lastBatch;
    if (!pending) return Promise.reject(err);
    return pending.done.then(
      () => Promise.reject(err),
      () => Promise.reject(new KvtFault(ErrorCodes.UNAVAILABLE, 'segment store could not write the state this condition was checked against; try again')),
    );
  }

  /**
   * Runs `work` synchronously with group commits held: every update it starts through the `update`
   * it is given joins the same flush (what `Execute` uses). The hold ends once all of them are staged.
   */
  withHeldCommits<T>(work: (update: (req: UpdateInput) => Promise<UpdateOutcome>) => T): T {
    const release = this.committer.hold();
    const staging: Promise<unknown>[] = [];
    const update = (req: UpdateInput): Promise<UpdateOutcome> => this.stageAndAcknowledge(req, (staged) => staging.push(staged.catch(() => undefined)));
    try {
      return work(update);
    } finally {
      void Promise.all(staging).then(release);
    }
  }

  /**
   * Validates and stages an update. Updates of one segment are staged in arrival order: while one
   * of them waits for a LevelDB read, later ones queue behind it, their own reads already under way
   * (the common unconditional update with nothing queued is staged synchronously, with no read at all).
   */
  private stage(req: UpdateInput): StagedUpdate | Promise<StagedUpdate> {
    const seg = this.segment(req.segmentId);
    const mods = checkModifications(req.modifications);
    if (mods.length === 0) return { batch: NOTHING_TO_COMMIT, firstSequence: 0, mods };
    if (mods[0].family !== '') {
      // Keys in ascending order (the usual) cannot repeat, and are merged into chunks without key strings.
      if (ascendingKeys(mods)) return this.serialized(seg, () => this.families.stage(seg, mods));
      const ids = mods.map((m) => (m.type === 'REMOVE_RANGE' ? undefined : m.key.toString('latin1')));
      checkDuplicates(mods, ids);
      return this.serialized(seg, () => this.families.stage(seg, mods, ids));
    }
    const keys = storageKeys(seg, mods);
    checkDuplicates(mods, keys.ids);
    if (!needsRead(mods)) return seg.stagingTail ? this.serialized(seg, () => stageUpdate(this.ctx, seg, mods, keys)) : stageUpdate(this.ctx, seg, mods, keys);
    return this.readThenStage(seg, mods, keys);
  }

  /**
   * Runs `run` once every update of `seg` that arrived before it is staged: at once when none is
   * waiting, else after them. Updates of one segment are thus staged in arrival order.
   */
  private serialized<T>(seg: SegmentState, run: () => T | Promise<T>): T | Promise<T> {
    let staged: T | Promise<T>;
    if (seg.stagingTail) staged = seg.stagingTail.then(run);
    else {
      staged = run();
      if (!(staged instanceof Promise)) return staged;
    }
    const tail = (staged as Promise<T>).then(() => undefined, () => undefined);
    seg.stagingTail = tail;
    void tail.then(() => {
      if (seg.stagingTail === tail) seg.stagingTail = undefined;
    });
    return staged;
  }

  /** The sweeper's removal of expired entries of one keyed family; resolves how many, once durable. */
  private async expireInFamily(segmentId: string, family: string, items: { key: Buffer; expiresAt: number }[]): Promise<number> {
    const seg = this.catalog.get(segmentId);
    if (!seg || seg.deleted || this.stateName !== 'open') return 0;
    const staged = await this.serialized(seg, () => this.families.expire(seg, family, items));
    if (!staged) return 0;
    await staged.batch.done;
    return staged.mods.length;
  }

  /**
   * Reads what the update's checks need at once, and stages it once the read is done and every update
   * of `seg` that arrived before it is staged. Why not read in turn: the read of one update would wait
   * for the reads and event-loop turns of every conditional update queued before it (W3's conditional
   * replaces of hot keys queue several per segment). The read registers with the overlay before it
   * starts, so every write staged after it began is still in the overlay when this update stages,
   * and the checks (overlay first, then what was read) see the state as it is at staging time.
   */
  private readThenStage(seg: SegmentState, mods: CheckedModification[], keys: UpdateKeys): Promise<StagedUpdate> {
    const token = this.overlay.beginRead();
    const read = readForUpdate(this.ctx, seg, mods, keys);
    read.catch(() => undefined); // observed below, once earlier updates are staged
    const staged = this.serialized(seg, () => read.then((r) => stageUpdate(this.ctx, seg, mods, keys, r))) as Promise<StagedUpdate>;
    const end = (): void => this.overlay.endRead(token);
    staged.then(end, end);
    return staged;
  }

  /**
   * Point reads of many keys (any families) of one segment, in request order, as many as `budget`
   * admits (the rest are left out of the answer; see GetResponse). A key with a staged write answers
   * with that write, but only once its batch is durable: a reader never sees a write that a crash
   * could still take back. If that batch fails, the read starts over.
   */
  async get(req: GetInput, budget = getAnswerCaps()): Promise<GetResponse> {
    const seg = this.segment(req.segmentId);
    return this.points.get(seg, checkGetKeys(req.keys), budget);
  }

  /** One page of keys or entries of one family, in unsigned bytewise key order (see IterateRequest). */
  async iterate(req: IterateInput): Promise<IterateResponse> {
    return this.readIteratePage(req, (c) => new ObjectPageSink(c.maxItems, MAX_ITERATOR_PAGE_BYTES, c.includeValues));
  }

  /**
   * {@link iterate} for the gRPC service: a keyed family's page comes as the bytes of its
   * `IterateResponse`, written straight from the chunk records (page-sink.ts); a family-less page as
   * the message.
   */
  async iterateForWire(req: IterateInput): Promise<IterateResponse | Buffer> {
    return this.readIteratePage(req, (c) => new WirePageSink(c.maxItems, MAX_ITERATOR_PAGE_BYTES, c.includeValues));
  }

  private async readIteratePage<P>(req: IterateInput, sinkFor: (checked: CheckedIterate) => FamilyPageSink<P>): Promise<IterateResponse | P> {
    const seg = this.segment(req.segmentId);
    const checked = checkIterate(req);
    if (seg.stagingTail) await seg.stagingTail;
    // Staged writes of this segment become visible to the snapshot once their batch is on disk.
    await seg.lastBatch?.done.catch(() => undefined);
    if (checked.family === '') return readPage(this.db, seg.dataPrefix, checked, this.storeClock.now());
    return readFamilyPage(this.db, seg.dataPrefix, checked, this.storeClock.now(), sinkFor(checked));
  }

  /**
   * One page of every entry of a segment, all families, in storage order (family-less keys after the
   * families). Pages continue strictly after the previous page's `position`.
   */
  async scan(req: ScanInput): Promise<ScanResponse> {
    const seg = this.segment(req.segmentId);
    const checked = checkScan(req);
    if (seg.stagingTail) await seg.stagingTail;
    await seg.lastBatch?.done.catch(() => undefined);
    return readScanPage(this.db, seg.dataPrefix, checked, this.storeClock.now());
  }

  /** Runs the expiry sweeper now (tests); resolves the number of entries removed. */
  sweepExpired(): Promise<number> {
    this.assertOpen();
    return this.sweeper.sweep(1_000);
  }
}

function acknowledge(staged: StagedUpdate): Promise<UpdateOutcome> {
  return staged.batch.done.then(() => new UpdateOutcome(staged.firstSequence, staged.mods));
}
