/**
 * Making flushes durable, and getting them into LevelDB.
 *
 * With a durable log (durable-log.ts), a flush is one log record; the writes of the records since
 * the last apply wait here, newest write per key only, and go to LevelDB together in synced batches
 * of about a MiB, the last of which stores the checkpoint (where replay would start); the log space
 * before the checkpoint is then reused. Applies run every `intervalMs`, when the log holds `applyBytes`,
 * when the log needs room, and when a reader needs LevelDB to hold a batch (iterators and scans read
 * LevelDB snapshots; point reads and checks read the overlay, which keeps every write until it is
 * applied). Between the slices of an apply LevelDB holds a state that never existed (part of a
 * flush; newer writes of some keys than of others), so readers take their snapshots from
 * {@link LogApplier.snapshot}, never in between. Why every apply synced, even one a reader asked
 * for: LevelDB syncs only its current log file, so an unsynced write left in the one before a
 * memtable switch could be lost to a power cut while a later synced one survives, with a checkpoint
 * past writes LevelDB never got.
 *
 * Without a log (capacity 0), or for a flush too large for it, the flush is written to LevelDB
 * directly with `sync`, together with everything still waiting (so LevelDB never holds a newer write
 * under an older one), and the checkpoint moves past every record written so far.
 *
 * Record payload: for each write in flush order, key length (u32 LE), value length (u32 LE;
 * 0xFFFFFFFF = a delete), key, value.
 */
import type { ClassicLevel } from 'classic-level';
import { CommitBatch, LOG_OP_OVERHEAD } from './commit-batch';
import { DurableLog, LogPosition } from './durable-log';
import type { FlushWriter } from './group-commit';
import { NS_META } from '../key-codec';
import { DEFAULT_LOG_APPLY_MS, DEFAULT_LOG_BYTES, SegmentEngineOptions } from '../segments/segment-state';
import type { Snapshot } from '../read/snapshot-view';
import type { StorageObserver } from '../storage-observer';

/** Where the checkpoint is kept: `m | 'l'` (segment metadata keys are 10 bytes long). */
export const CHECKPOINT_KEY = Buffer.from([NS_META, 0x6c]);
const DELETE = 0xffffffff;
/** An apply writes LevelDB batches of about this many bytes of keys and values (see writePending). */
const APPLY_SLICE_BYTES = 1024 * 1024;
/** Writes an apply copies into a LevelDB batch between two turns of the event loop. */
const APPLY_SLICE_WRITES = 1024;

/** The checkpoint's stored form: lsn and offset (u64 BE each), and the crc32 the next record chains to (u32 BE). */
export function encodeCheckpoint(p: LogPosition): Buffer {
  const out = Buffer.allocUnsafe(20);
  out.writeBigUInt64BE(BigInt(p.lsn), 0);
  out.writeBigUInt64BE(BigInt(p.offset), 8);
  out.writeUInt32BE(p.chain, 16);
  return out;
}

/**
 * Reads a checkpoint stored by {@link encodeCheckpoint}; undefined for none.
 * @throws when the stored value is not a checkpoint (the database cannot be trusted to replay from it)
 */
export function decodeCheckpoint(value: Buffer | undefined): LogPosition | undefined {
  if (!value) return undefined;
  if (value.length !== 20) throw new Error(`the durable log's checkpoint is ${value.length} bytes long, not 20`);
  return { lsn: Number(value.readBigUInt64BE(0)), offset: Number(value.readBigUInt64BE(8)), chain: value.readUInt32BE(16) };
}

/** Visits the writes of a record payload in order (value null = delete). */
export function decodeOps(payload: Buffer, visit: (key: Buffer, value: Buffer | null) => void): void {
  let at = 0;
  while (at < payload.length) {
    const keyLength = payload.readUInt32LE(at);
    const valueLength = payload.readUInt32LE(at + 4);
    at += LOG_OP_OVERHEAD;
    const key = payload.subarray(at, at + keyLength);
    at += keyLength;
    if (valueLength === DELETE) {
      visit(key, null);
      continue;
    }
    visit(key, payload.subarray(at, at + valueLength));
    at += valueLength;
  }
}

/** A value at least this long goes into a record's write as it is; shorter ones are copied together. */
const VALUE_BY_REFERENCE_BYTES = 512;

/**
 * The payload of the log record of `group`'s writes, in order (`payloadBytes` in all), as pieces
 * for one gathering write: the lengths, keys and short values copied into one buffer, a long value
 * (a family's chunk record, most of a W4 flush) given as it is, so it is not copied again on the way.
 */
function recordPieces(group: readonly CommitBatch[], payloadBytes: number): Buffer[] {
  let referenced = 0;
  for (const batch of group) for (const value of batch.values) if (value && value.length >= VALUE_BY_REFERENCE_BYTES) referenced += value.length;
  const small = Buffer.allocUnsafe(payloadBytes - referenced);
  const pieces: Buffer[] = [];
  let at = 0;
  let from = 0;
  for (const batch of group) {
    const { keys, values } = batch;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const value = values[i];
      small.writeUInt32LE(key.length, at);
      small.writeUInt32LE(value ? value.length : DELETE, at + 4);
      at += LOG_OP_OVERHEAD;
      at += key.copy(small, at);
      if (!value) continue;
      if (value.length < VALUE_BY_REFERENCE_BYTES) {
        at += value.copy(small, at);
        continue;
      }
      pieces.push(small.subarray(from, at), value);
      from = at;
    }
  }
  if (at > from) pieces.push(small.subarray(from, at));
  return pieces;
}

type Chain = ReturnType<ClassicLevel<Buffer, Buffer>['batch']>;

/** Adds a write to a LevelDB chained batch: a put, or a delete for a null value. */
export function addWrite(chain: Chain, key: Buffer, value: Buffer | null): void {
  if (value) chain.put(key, value);
  else chain.del(key);
}

/** Writes of durable flushes waiting for LevelDB, newest per key. */
class Pending {
  readonly writes = new Map<string, { key: Buffer; value: Buffer | null }>();
  readonly batches: CommitBatch[] = [];
  /** When the oldest of them was durable (performance.now()), for the apply lag. */
  since: number | undefined;

  add(group: readonly CommitBatch[]): void {
    this.since ??= performance.now();
    for (const batch of group) {
      this.batches.push(batch);
      const { keys, values, ids } = batch;
      for (let i = 0; i < keys.length; i++) this.writes.set(ids[i] ?? keys[i].toString('latin1'), { key: keys[i], value: values[i] });
    }
  }
}

/** Puts durable writes into LevelDB (see the module comment). */
export class LogApplier implements FlushWriter {
  private pending = new Pending();
  /** Where replay would start once everything pending is applied. */
  private replayFrom: LogPosition | undefined;
  /** Applies run one after another: the tail of that chain. */
  private tail: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private failed: { err: unknown } | undefined;
  /** Set while an apply is between its first and its last LevelDB write: LevelDB holds part of it. */
  private slicing = false;
  /** Readers waiting for the apply between slices to end, for their snapshot. */
  private snapshotWaiters: Array<{ resolve: (s: Snapshot) => void; reject: (err: unknown) => void }> = [];
  /** Applies done, and the LevelDB writes in them (statistics). */
  applies = 0;
  appliedOps = 0;

  /** Longest a flushed write waits before it is applied. */
  private readonly intervalMs: number;
  /** Log bytes held past which an apply starts at once: a quarter of the log's capacity. */
  private readonly applyBytes: number;
  /** Told of each apply (its writes and the lag of the oldest). */
  private readonly observer: StorageObserver | undefined;

  constructor(
    private readonly db: ClassicLevel<Buffer, Buffer>,
    private readonly log: DurableLog | undefined,
    options: Pick<SegmentEngineOptions, 'logApplyMs' | 'logBytes' | 'observer'>,
    /** Called with the batches of each apply, in flush order, once LevelDB holds them. */
    private readonly onApplied: (batches: readonly CommitBatch[]) => void,
    /** Called once when an apply fails (the writes stay in the log; a restart applies them). */
    private readonly onFailure: (err: unknown) => void,
  ) {
    this.intervalMs = options.logApplyMs ?? DEFAULT_LOG_APPLY_MS;
    this.applyBytes = Math.floor((options.logBytes ?? DEFAULT_LOG_BYTES) / 4);
    this.observer = options.observer;
  }

  /** Bytes of the durable log held by records not yet applied (0 without a log). */
  get logHeldBytes(): number {
    return this.log?.heldBytes ?? 0;
  }

  /** Set by {@link write} for the {@link written} that follows it. */
  private replayFromNext: LogPosition | undefined;

  /**
   * Makes the writes of `group` durable: one log record, or a synced LevelDB write (no log, or a group
   * too large for it). Resolves true when LevelDB already holds them.
   */
  async write(group: readonly CommitBatch[]): Promise<boolean> {
    let bytes = 0;
    for (const batch of group) bytes += batch.bytes;
    if (!this.log || !this.log.fits(bytes)) {
      await this.writeDirect(group);
      return true;
    }
    this.replayFromNext = await this.log.append(recordPieces(group, bytes), () => this.apply());
    return false;
  }

  /** After {@link write} (and the acknowledgement): the group waits for its apply, unless LevelDB has it. */
  written(group: readonly CommitBatch[], inLevelDb: boolean): void {
    if (inLevelDb) {
      this.onApplied(group);
      return;
    }
    if (this.failed) {
      for (const batch of group) batch.refuseApply(this.failed.err);
      return;
    }
    this.pending.add(group);
    this.replayFrom = this.replayFromNext;
    if (this.log && this.log.heldBytes >= this.applyBytes) this.applySoon();
    else this.timer ??= setTimeout(() => this.applySoon(), this.intervalMs);
  }

  /** Starts an apply whose failure is reported through onFailure and the batches (not to a caller). */
  private applySoon(): void {
    this.apply().catch(() => undefined);
  }

  /** Resolves once LevelDB holds `batch` (applying now if it waits); rejects if it never will. */
  async applied(batch: CommitBatch): Promise<void> {
    if (batch.isApplied) return;
    await batch.done;
    if (!batch.isApplied) this.applySoon();
    await batch.applied;
  }

  /**
   * A LevelDB snapshot that holds every apply whole or not at all: taken now, unless an apply is
   * between its slices, else the moment its last slice is written (before any other apply starts).
   * Why: an apply is written in several LevelDB batches (see writePending), and between them LevelDB
   * holds some writes of a flush and not others (a chunk split with its left half only), and newer
   * writes of some keys than of others; a state that never existed. Rejects if that apply fails.
   */
  snapshot(): Promise<Snapshot> {
    if (!this.slicing) return Promise.resolve(this.db.snapshot());
    return new Promise((resolve, reject) => this.snapshotWaiters.push({ resolve, reject }));
  }

  /** The apply between slices is over (whole, or failed): snapshots for the readers waiting. */
  private sliced(err?: { err: unknown }): void {
    this.slicing = false;
    const waiters = this.snapshotWaiters;
    this.snapshotWaiters = [];
    for (const w of waiters) {
      if (err) w.reject(err.err);
      else w.resolve(this.db.snapshot());
    }
  }

  /**
   * Applies everything pending now, releasing the log space before the checkpoint. Resolves once
   * done (rejects if this apply failed).
   */
  apply(): Promise<void> {
    const run = this.tail.then(() => this.applyNow());
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Stops the timer, applies what is pending (unless an apply failed: the log keeps it for the next
   * open) and closes the log. The committer must be drained first.
   */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.failed) await this.apply().catch(() => undefined);
    await this.log?.close();
  }

  private async applyNow(): Promise<void> {
    if (this.pending.batches.length > 0) await this.writePending(undefined);
  }

  /**
   * Writes `group` to LevelDB with `sync`, after everything pending and in the same batch, with the
   * checkpoint past every record written so far.
   */
  private writeDirect(group: readonly CommitBatch[]): Promise<void> {
    const run = this.tail.then(() => this.writePending(group));
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * One synced LevelDB batch of everything pending, then `direct`'s writes (a group not logged) if
   * given, and the checkpoint; then the log space before it is released and the batches settled.
   */
  private async writePending(direct: readonly CommitBatch[] | undefined): Promise<void> {
    if (this.failed) throw this.failed.err;
    clearTimeout(this.timer);
    this.timer = undefined;
    const { writes, batches, since } = this.pending;
    this.pending = new Pending();
    // Every record written so far is in LevelDB after a direct write; after an apply, the ones pending.
    const checkpoint = direct ? this.log?.next : this.replayFrom;
    let chain = this.db.batch();
    try {
      let added = 0;
      let bytes = 0;
      for (const { key, value } of writes.values()) {
        addWrite(chain, key, value);
        bytes += key.length + (value ? value.length : 0);
        // Written in slices: one synced LevelDB write of a second's writes (several MB) holds the disk
        // for tens of ms, and the flushes' log writes wait behind it; copying them all into one batch
        // holds the event loop as long (W1: ~50,000 puts per store). A slice without the checkpoint is
        // harmless after a crash: replay from the checkpoint before writes them again, and the newest
        // last. Nothing else writes these keys to LevelDB meanwhile (applies run in turn).
        // Readers take their snapshots before the first slice or after the last (see snapshot()).
        if (bytes >= APPLY_SLICE_BYTES) {
          this.slicing = true;
          await chain.write({ sync: true });
          chain = this.db.batch();
          bytes = 0;
        } else if (++added % APPLY_SLICE_WRITES === 0) {
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      for (const batch of direct ?? []) for (let i = 0; i < batch.keys.length; i++) addWrite(chain, batch.keys[i], batch.values[i]);
      if (checkpoint) chain.put(CHECKPOINT_KEY, encodeCheckpoint(checkpoint));
      await chain.write({ sync: true });
      if (this.slicing) this.sliced();
    } catch (err) {
      if (this.slicing) this.sliced({ err });
      await chain.close().catch(() => undefined);
      // A direct group fails with the committer; what was pending stays in the log for a restart.
      this.fail(err, batches);
      throw err;
    }
    if (!direct) {
      this.applies++;
      this.appliedOps += writes.size;
      this.observer?.applied(writes.size, since === undefined ? 0 : (performance.now() - since) / 1000);
    }
    if (checkpoint) {
      // (After a direct write nothing was logged meanwhile: the committer waits for it. An apply must
      // not set it: records written while it ran moved it on.)
      if (direct) this.replayFrom = checkpoint;
      this.log?.release(checkpoint);
    }
    if (batches.length > 0) this.onApplied(batches);
  }

  private fail(err: unknown, batches: readonly CommitBatch[]): void {
    const first = !this.failed;
    this.failed ??= { err };
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const batch of batches) batch.refuseApply(err);
    for (const batch of this.pending.batches) batch.refuseApply(err);
    if (first) this.onFailure(err);
  }
}
