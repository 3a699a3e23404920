/**
 * Group commit: every write staged while a flush runs goes into the next flush, which is made
 * durable in one write (a record of the durable log, or without one a LevelDB batch written with
 * `sync: true`; see log-applier.ts); callers are acknowledged only once that write completed.
 * A failed flush rejects everything in it and everything queued behind it (those updates were staged
 * on top of its state), rolls their entries out of the overlay and tells the engine (`onFailure`).
 * It is also the last write: the committer is fail-stop. Why: a log whose write failed (the durable
 * log's, or LevelDB's, which stops itself only when the fsync fails) may end in a torn record, behind
 * which recovery drops later records — acknowledged ones. Only a restart (recovery reads the logs)
 * makes writing safe again, as etcd does by exiting on a failed WAL write.
 * A durable write leaves the overlay only once LevelDB holds it too (`onApplied`).
 */
import { CommitBatch } from './commit-batch';
import type { Overlay, OverlayEntry } from '../overlay';
import type { StorageObserver } from '../storage-observer';

/** What makes a flush durable and later puts it into LevelDB (log-applier.ts). */
export interface FlushWriter {
  /** Makes the writes of `group` durable in one write; resolves true when LevelDB already holds them. */
  write(group: readonly CommitBatch[]): Promise<boolean>;
  /** After the acknowledgement: the group waits for its apply, unless LevelDB has it (`inLevelDb`). */
  written(group: readonly CommitBatch[], inLevelDb: boolean): void;
}

/** Default longest time a flush waits for held updates (one Execute's) to finish staging. */
export const DEFAULT_MAX_HOLD_MS = 10;

/** Statistics of the committer, for logs and benchmarks. */
export interface GroupCommitStats {
  flushes: number;
  ops: number;
}

/**
 * The single writer of the engine. A flush makes every batch queued at that moment durable in ONE
 * write: the fixed cost of a durable write (fsync, wake-ups) dominates, so while one write runs,
 * whatever was staged meanwhile is written next in one go, the way LevelDB itself groups concurrent
 * writers.
 */
export class GroupCommitter {
  /** Batches waiting to be written, oldest first; only the last one still takes new updates. */
  private readonly queue: CommitBatch[] = [];
  private flushing: Promise<void> | undefined;
  private scheduled = false;
  private holdTimer: NodeJS.Timeout | undefined;
  private holds = 0;
  readonly stats: GroupCommitStats = { flushes: 0, ops: 0 };
  /** Called with the overlay entries of every batch LevelDB holds, before they leave the overlay. */
  onCommitted: (entries: readonly OverlayEntry[]) => void = () => undefined;
  /** Called once, after the failed flush has rejected everything staged. */
  onFailure: (err: unknown) => void = () => undefined;
  private failed: { err: unknown } | undefined;

  /**
   * @param writer makes a flush durable and later puts it into LevelDB (log-applier.ts)
   * @param maxFlushOps a batch holding this many operations takes no further updates (one update is
   * never split), so callers are acknowledged in moderate groups. Why: if every caller waits on the
   * same batch they all restart together and the disk idles while they stage; closed batches let the
   * updates staged while a write runs be written as soon as it ends.
   * @param maxHoldMs longest a hold delays a flush.
   * @param observer told of each flush made durable (its updates, bytes and time).
   */
  constructor(
    private readonly writer: FlushWriter,
    private readonly overlay: Overlay,
    private readonly maxFlushOps = 128,
    private readonly maxHoldMs = DEFAULT_MAX_HOLD_MS,
    private readonly observer?: StorageObserver,
  ) {}

  /** The error of the failed write after which this committer writes nothing more; undefined before. */
  get failure(): unknown {
    return this.failed?.err;
  }

  /** The batch being filled: stage one update's ops and overlay entries into it, then call {@link staged}. */
  batch(): CommitBatch {
    let last = this.queue[this.queue.length - 1];
    // While held (one Execute), everything joins one batch whatever its size.
    if (!last || (last.weight >= this.maxFlushOps && this.holds === 0)) {
      last = new CommitBatch();
      this.queue.push(last);
    }
    return last;
  }

  /** Signals that something was staged: a flush starts soon unless one is running. */
  staged(): void {
    if (this.flushing) return;
    // A full batch takes no more updates, so waiting a turn gains nothing: writing it now lets the
    // next updates stage while it is on its way to disk (callers otherwise fall into lockstep).
    if (this.holds === 0 && this.queue.length > 0 && this.queue[this.queue.length - 1].weight >= this.maxFlushOps) {
      this.kick();
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.holds > 0) {
      // A hold delays a flush only briefly, so a stream of overlapping Executes cannot starve it.
      this.holdTimer = setTimeout(() => this.fire(true), this.maxHoldMs);
      return;
    }
    // setImmediate (not a microtask) lets every request that arrived in this turn join the batch.
    setImmediate(() => this.fire(false));
  }

  private fire(force: boolean): void {
    if (!this.scheduled) return;
    this.scheduled = false;
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    this.kick(force);
  }

  /** Keeps flushes from starting (for at most `maxHoldMs`) until the returned function is called. */
  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      if (this.holds > 0 || this.queue.length === 0) return;
      if (this.holdTimer) this.fire(false);
      else this.staged();
    };
  }

  /** Resolves once everything staged so far is durable (or failed). */
  async drain(): Promise<void> {
    while (this.flushing || this.queue.length > 0) {
      if (!this.flushing) this.kick(true);
      await this.flushing?.catch(() => undefined);
    }
  }

  /**
   * Fails the committer from outside a flush (LevelDB could not take writes the log holds): what is
   * queued is refused and nothing more is written, as after a failed flush.
   */
  fail(err: unknown): void {
    if (this.failed) return;
    this.failed = { err };
    this.onFailure(err);
    if (!this.flushing) void this.refuseQueued(err);
  }

  /** LevelDB holds `batches` (flushed earlier, in this order): their entries leave the overlay. */
  applied(batches: readonly CommitBatch[]): void {
    for (const batch of batches) {
      this.onCommitted(batch.entries);
      this.overlay.committed(batch.entries);
      batch.resolveApplied();
    }
  }

  private kick(force = false): void {
    if (this.flushing || this.queue.length === 0) return;
    if (this.failed) {
      void this.refuseQueued(this.failed.err);
      return;
    }
    if (this.holds > 0 && !force) {
      this.staged(); // held: flush when released, or after maxHoldMs at the latest
      return;
    }
    this.flushing = this.flush(this.queue.splice(0, this.queue.length));
  }

  /** Rejects every queued batch with `err` (after a failed write). */
  private refuseQueued(err: unknown): Promise<void> {
    return this.refuse(this.queue.splice(0, this.queue.length), err);
  }

  /** Rolls `batches` out of the overlay and rejects them with `err`. */
  private async refuse(batches: CommitBatch[], err: unknown): Promise<void> {
    for (const batch of batches) this.overlay.rolledBack(batch.entries);
    for (const batch of batches) batch.reject(err);
  }

  /** Starts the next write if one is due: a full batch at once, a partial one after a turn for more updates. */
  private next(): void {
    if (this.queue.length > 1 || (this.queue.length === 1 && this.queue[0].weight >= this.maxFlushOps)) this.kick();
    else if (this.queue.length === 1) this.staged();
  }

  /**
   * Makes the group durable in one write, then settles every batch of the group in order and hands
   * the group to the writer to apply. On success the next write starts before this group is
   * acknowledged: its callers' next updates then stage while that write runs, instead of everyone
   * staging while the disk idles.
   */
  private async flush(group: CommitBatch[]): Promise<void> {
    const start = performance.now();
    let inLevelDb: boolean;
    try {
      if (this.failed) throw this.failed.err;
      for (const batch of group) for (const add of batch.beforeWrite) add(batch);
      inLevelDb = await this.writer.write(group);
    } catch (err) {
      const first = !this.failed;
      this.failed ??= { err };
      if (first) this.onFailure(err);
      // (This await also keeps `flushing` from being reset before kick() has assigned it.)
      await this.refuse(group, this.failed.err);
      // Everything queued behind the failed write was checked against (and, for chunks, built on) its
      // state; nothing is written any more anyway.
      await this.refuseQueued(this.failed.err);
      this.flushing = undefined;
      this.next();
      return;
    }
    this.flushing = undefined;
    this.next();
    this.stats.flushes++;
    let updates = 0;
    let bytes = 0;
    for (const batch of group) {
      this.stats.ops += batch.ops;
      updates += batch.updates;
      bytes += batch.bytes;
      batch.resolve();
    }
    this.observer?.flushed(updates, bytes, (performance.now() - start) / 1000);
    this.writer.written(group, inLevelDb);
  }
}
