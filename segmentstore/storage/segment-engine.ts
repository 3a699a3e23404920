/**
 * The table-segment engine: every segment of one segment store in ONE LevelDB (classic-level).
 *
 * Semantics (DESIGN §2): an Update is one atomic batch of PUT / INSERT / REMOVE / REMOVE_RANGE within
 * one key family; its conditions are all checked against the state before the batch, then all of it
 * is applied or none. Versions are (segment id, sequence) with a per-segment u64 sequence that is
 * strictly increasing and persisted in the same flush as the data. Conditional checks and reads see
 * every update staged before them, including ones still waiting in the group commit. Updates
 * resolve only once their flush is durable: a record of the durable log (durable-log.ts), later
 * applied to LevelDB (log-applier.ts), or without a log a LevelDB batch written with `sync: true`.
 * Opening replays the log records LevelDB does not hold yet.
 *
 * Lifecycle: `opening → open → closing → closed`; close finishes the flush in progress, applies
 * everything to LevelDB and closes it (which closes open iterators). The engine has no gRPC imports
 * and logs nothing.
 */
import { ClassicLevel } from 'classic-level';
import { ErrorCodes } from '../../proto/error-codes';
import { MAX_ITERATOR_PAGE_BYTES } from '../../proto/limits';
import type { GetResponse, IterateResponse, ScanResponse, SegmentInfo } from '../../proto/messages';
import { errorMessage, KvtFault } from '../../server-kit/fault';
import { ExpirySweeper } from './segments/expiry-sweeper';
import { CommitBatch } from './log/commit-batch';
import { GroupCommitter } from './log/group-commit';
import type { DurableLog } from './log/durable-log';
import { openStorage } from './engine-storage';
import { LogApplier } from './log/log-applier';
import { Overlay } from './overlay';
import type { CacheStats } from './byte-lru';
import { countSegment, readFamilyPage, readScanPage } from './read/chunk-reader';
import { FamilyStore, Serializer } from './chunks/family-store';
import { FamilyPageReader } from './read/family-page-reader';
import { readPage } from './read/page-reader';
import { getAnswerCaps } from './read/page-caps';
import { ObjectPageSink, PageSinkFactory, PageShape } from './read/page-sink';
import { PointReader } from './read/point-reader';
import { SegmentCatalog } from './segments/segment-catalog';
import { SnapshotView } from './read/snapshot-view';
import { EngineState, SegmentEngineOptions, SegmentState } from './segments/segment-state';
import { needsRead, readForUpdate, StageContext, StagedUpdate, stageUpdate, storageKeys, UpdateKeys, UpdateOutcome } from './update-stager';
import { ascendingKeys, inKeyOrder } from './chunks/chunk-merge';
import { checkGetKeys, checkIterate, checkScan, IterateInput, ScanInput } from './read/read-validation';
import { StoreClock } from './segments/store-clock';
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

export { StorageLockedError } from './engine-storage';

/** Makes the sink of {@link SegmentEngine.iterate}'s pages. */
const objectPageSink = (shape: PageShape): ObjectPageSink => new ObjectPageSink(shape.maxItems, shape.pageBytes, shape.includeValues);

/** The "batch" of an empty update: nothing to write, already durable and applied. */
const NOTHING_TO_COMMIT = new CommitBatch();
NOTHING_TO_COMMIT.resolve();
NOTHING_TO_COMMIT.resolveApplied();

/** Table segments on one LevelDB. Create with {@link SegmentEngine.open}. */
export class SegmentEngine {
  private stateName: EngineState = 'opening';
  private readonly overlay = new Overlay();
  private readonly committer: GroupCommitter;
  private readonly applier: LogApplier;
  private readonly sweeper: ExpirySweeper;
  private readonly catalog: SegmentCatalog;
  private readonly families: FamilyStore;
  private readonly points: PointReader;
  private readonly familyPages: FamilyPageReader;
  private readonly ctx: StageContext;
  /** The store's clock for expiry, which never goes back (store-clock.ts). */
  private readonly storeClock: StoreClock;
  private closed: Promise<void> = Promise.resolve();
  /** The family filter's scan of LevelDB, started once open (see family-filter.ts). */
  private learning: Promise<void> = Promise.resolve();

  private constructor(
    readonly location: string,
    private readonly db: ClassicLevel<Buffer, Buffer>,
    log: DurableLog | undefined,
    storeClock: StoreClock,
    options: SegmentEngineOptions,
  ) {
    this.storeClock = storeClock;
    const clock = this.storeClock.now;
    this.applier = new LogApplier(
      db,
      log,
      options,
      (batches) => this.committer.applied(batches),
      (err) => this.committer.fail(err),
    );
    this.committer = new GroupCommitter(this.applier, this.overlay, options.maxFlushOps, options.maxHoldMs, options.observer);
    this.catalog = new SegmentCatalog(db, async (seg) => {
      await this.settled(seg);
      // A batch that failed (and so was not waited for) leaves the engine failed, and may leave
      // earlier logged writes of the segment unapplied: no delete then.
      this.assertOpen();
    });
    this.ctx = { db, overlay: this.overlay, committer: this.committer, clock };
    this.families = new FamilyStore(this.ctx, options.chunkCacheBytes, options.directoryCacheBytes);
    this.points = new PointReader(db, this.overlay, this.families, clock);
    this.familyPages = new FamilyPageReader(db, this.families, clock);
    this.committer.onCommitted = (entries) => this.families.committed(entries);
    this.committer.onFailure = (err) => {
      this.families.invalidate();
      if (this.stateName !== 'open') return;
      this.stateName = 'failed';
      options.onStorageFailure?.(err);
    };
    const onError = options.onBackgroundError ?? (() => undefined);
    this.sweeper = new ExpirySweeper(
      db,
      this.overlay,
      this.committer,
      this.storeClock,
      options.expirySweepBatchSize ?? 1000,
      (err) => onError(err, 'expiry sweep'),
      (segmentId, family, items) => this.expireInFamily(segmentId, family, items),
    );
  }

  /**
   * Opens (creating if needed) the LevelDB at `location`, replays the durable log into it, loads the
   * segment records and resumes interrupted deletions.
   * @throws StorageLockedError when another process has the database open.
   */
  static async open(location: string, options: SegmentEngineOptions = {}): Promise<SegmentEngine> {
    const storage = await openStorage(location, options);
    const engine = new SegmentEngine(location, storage.db, storage.log, storage.clock, options);
    try {
      await engine.catalog.load();
    } catch (err) {
      await storage.close();
      throw err;
    }
    engine.stateName = 'open';
    engine.sweeper.start(options.expirySweepIntervalMs ?? 1000);
    // A scan in the background: until it is done, every write of a family reads its first chunk.
    engine.learning = engine.families.filter
      .learn(
        storage.db,
        engine.catalog.all().map((seg) => seg.dataPrefix),
      )
      .catch(() => undefined);
    return engine;
  }

  /** The lifecycle state. */
  get state(): EngineState {
    return this.stateName;
  }

  /**
   * Statistics of the group commit: flushes and the writes in them; applies of logged writes to LevelDB
   * and the writes in those (the newest of each key only).
   */
  get commitStats(): { flushes: number; ops: number; applies: number; appliedOps: number } {
    return { ...this.committer.stats, applies: this.applier.applies, appliedOps: this.applier.appliedOps };
  }

  /** What the chunk cache and the family-directory cache hold and how their lookups went. */
  get cacheStats(): { chunk: CacheStats; directory: CacheStats } {
    return this.families.cacheStats;
  }

  /**
   * Resolves once the family filter's scan after opening ended: true when the filter knows every
   * family (writes of new families skip a read from then on), false when the scan failed or stopped.
   */
  async familiesLearnt(): Promise<boolean> {
    await this.learning;
    return this.families.filter.ready;
  }

  /** Bytes of the durable log held by acknowledged writes not yet applied to LevelDB (0 without a log). */
  get durableLogHeldBytes(): number {
    return this.applier.logHeldBytes;
  }

  /**
   * Resolves once LevelDB holds every write of `seg` staged so far (applying it now if needed), for
   * the reads that go to LevelDB snapshots: iterators, scans, counts. A write whose flush failed was
   * never acknowledged and is not waited for; if the engine failed meanwhile, the read is refused.
   */
  private async settled(seg: SegmentState): Promise<void> {
    if (seg.stagingTail) await seg.stagingTail;
    const batch = seg.lastBatch;
    if (!batch || batch.isApplied) return;
    await this.applier.applied(batch).catch(() => undefined);
    if (!batch.isApplied && batch.durable) this.assertOpen();
  }

  /**
   * Runs `read` on a LevelDB snapshot that holds every write of `seg` staged so far, and never part
   * of an apply (see LogApplier.snapshot): what iterators, scans and counts read.
   */
  private async atSnapshot<T>(seg: SegmentState, read: (view: SnapshotView) => Promise<T>): Promise<T> {
    await this.settled(seg);
    const snapshot = await this.applier.snapshot().catch((err: unknown) => {
      this.assertOpen();
      throw err;
    });
    const view = new SnapshotView(this.db, snapshot);
    try {
      return await read(view);
    } finally {
      await view.close();
    }
  }

  /**
   * Refuses new calls, lets updates already accepted finish staging and flushing, then closes
   * LevelDB (closing any open iterator). Idempotent.
   */
  async close(): Promise<void> {
    if (this.stateName === 'closing' || this.stateName === 'closed') return this.closed;
    this.stateName = 'closing';
    this.closed = (async () => {
      this.families.filter.stop();
      await this.learning;
      await this.sweeper.stop();
      await Promise.all(this.catalog.all().map((seg) => seg.stagingTail));
      await this.committer.drain();
      await this.catalog.idle();
      await this.applier.close();
      await this.storeClock.save(this.db, true).catch(() => undefined);
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
    const { count, bytes } = await this.atSnapshot(seg, (view) => countSegment(view, seg.dataPrefix, this.storeClock.now()));
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
      const serialize: Serializer = (run) => this.serialized(seg, run);
      // Keys in ascending order (the usual) cannot repeat, and are merged into chunks without key strings.
      if (ascendingKeys(mods)) return this.families.stage(seg, mods, undefined, serialize);
      const ids = mods.map((m) => (m.type === 'REMOVE_RANGE' ? undefined : m.key.toString('latin1')));
      checkDuplicates(mods, ids);
      const sorted = inKeyOrder(mods, ids);
      if (sorted) return this.families.stage(seg, sorted.mods, undefined, serialize, sorted);
      return this.families.stage(seg, mods, ids, serialize);
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
    const tail = (staged as Promise<T>).then(
      () => undefined,
      () => undefined,
    );
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
    return this.iterateInto(req, objectPageSink);
  }

  /**
   * {@link iterate}, with a keyed family's page made by the sink `sinkFor` makes from the entries'
   * ranges in the chunk records (the gRPC service writes its response bytes straight from them:
   * segmentstore/service/wire-page-sink.ts); a family-less page comes as the message.
   */
  async iterateInto<P>(req: IterateInput, sinkFor: PageSinkFactory<P>): Promise<IterateResponse | P> {
    const seg = this.segment(req.segmentId);
    const checked = checkIterate(req);
    // Family-less pages: staged writes of this segment become visible to the snapshot once LevelDB holds them.
    if (checked.family === '') return this.atSnapshot(seg, (view) => readPage(view, seg.dataPrefix, checked, this.storeClock.now()));
    return this.familyPages.read(seg, checked, sinkFor, () =>
      this.atSnapshot(seg, (view) => {
        const shape: PageShape = { maxItems: checked.maxItems, pageBytes: MAX_ITERATOR_PAGE_BYTES, includeValues: checked.includeValues };
        return readFamilyPage(view, seg.dataPrefix, checked, this.storeClock.now(), sinkFor(shape));
      }),
    );
  }

  /**
   * One page of every entry of a segment, all families, in storage order (family-less keys after the
   * families). Pages continue strictly after the previous page's `position`.
   */
  async scan(req: ScanInput): Promise<ScanResponse> {
    const seg = this.segment(req.segmentId);
    const checked = checkScan(req);
    return this.atSnapshot(seg, (view) => readScanPage(view, seg.dataPrefix, checked, this.storeClock.now()));
  }

  /**
   * Runs the expiry sweeper now over everything written so far (tests); resolves the number of
   * entries removed. (The background sweeps read the expiry index as applied to LevelDB, so an entry
   * is reclaimed up to one apply interval later; reads never see it expired or not either way.)
   */
  async sweepExpired(): Promise<number> {
    this.assertOpen();
    await this.applier.apply();
    return this.sweeper.sweep(1_000);
  }
}

/**
 * Resolves once the staged update is durable. It is counted in its batch here, as it is staged (or in
 * the microtask after): before its flush can have been written, which takes I/O.
 */
function acknowledge(staged: StagedUpdate): Promise<UpdateOutcome> {
  if (staged.batch !== NOTHING_TO_COMMIT) staged.batch.updates++;
  return staged.batch.done.then(() => new UpdateOutcome(staged.firstSequence, staged.mods));
}
