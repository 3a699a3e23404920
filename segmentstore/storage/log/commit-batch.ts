/**
 * The unit of a group commit: the updates acknowledged together, their writes in order for the
 * flush's one durable write, and the promises that settle once they are durable and once LevelDB
 * holds them.
 */
import type { OverlayEntry } from '../overlay';

/** Bytes a write takes in a log record beside its key and value. */
export const LOG_OP_OVERHEAD = 8;

/**
 * The updates acknowledged together. Their writes are kept in order (keys, values; a null value is a
 * delete) for the flush's one durable write. `done` settles once they are durable (or failed),
 * `applied` once LevelDB holds them (or never will).
 */
export class CommitBatch {
  /** Number of writes staged. */
  ops = 0;
  /**
   * Modifications staged: what closes a batch (see maxFlushOps). One chunk record can carry a
   * whole update of a keyed family, so writes undercount the work.
   */
  weight = 0;
  /** Bytes the writes take in a log record. */
  bytes = 0;
  /** Updates (callers' atomic batches) staged into it, for the observer's flush sizes; the sweeper's expiries are not counted. */
  updates = 0;
  readonly keys: Buffer[] = [];
  readonly values: (Buffer | null)[] = [];
  /** The latin1 form of each key where the stager had it (the applier keys its map by it). */
  readonly ids: (string | undefined)[] = [];
  readonly entries: OverlayEntry[] = [];
  /** Called just before the write, to add ops that depend on everything staged (sequence records). */
  readonly beforeWrite: Array<(batch: CommitBatch) => void> = [];
  readonly done: Promise<void>;
  readonly applied: Promise<void>;
  /** Set once `done` resolved: the writes are durable. */
  durable = false;
  /** Set once `applied` resolved: LevelDB holds the writes. */
  isApplied = false;
  private settleDone!: [() => void, (err: unknown) => void];
  private settleApplied!: [() => void, (err: unknown) => void];

  constructor() {
    this.done = new Promise<void>((resolve, reject) => (this.settleDone = [resolve, reject]));
    this.applied = new Promise<void>((resolve, reject) => (this.settleApplied = [resolve, reject]));
    // Unobserved failures are reported to the callers that await them; never crash the process.
    this.done.catch(() => undefined);
    this.applied.catch(() => undefined);
  }

  /** Stages a put; `id` is the key's latin1 form, if at hand. */
  put(key: Buffer, value: Buffer, id?: string): void {
    this.keys.push(key);
    this.values.push(value);
    this.ids.push(id);
    this.bytes += LOG_OP_OVERHEAD + key.length + value.length;
    this.ops++;
    this.weight++;
  }

  /** Stages a delete; `id` is the key's latin1 form, if at hand. */
  del(key: Buffer, id?: string): void {
    this.keys.push(key);
    this.values.push(null);
    this.ids.push(id);
    this.bytes += LOG_OP_OVERHEAD + key.length;
    this.ops++;
    this.weight++;
  }

  /** The writes are durable: acknowledge. */
  resolve(): void {
    this.durable = true;
    this.settleDone[0]();
  }

  /** The durable write failed: nothing of the batch was written. */
  reject(err: unknown): void {
    this.settleDone[1](err);
    this.settleApplied[1](err);
  }

  /** LevelDB holds the writes. */
  resolveApplied(): void {
    this.isApplied = true;
    this.settleApplied[0]();
  }

  /** LevelDB will not get the writes from this process (they stay in the log for a restart). */
  refuseApply(err: unknown): void {
    this.settleApplied[1](err);
  }
}
