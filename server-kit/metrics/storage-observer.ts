/**
 * What a segment store's storage engine can tell its metrics as it works, beside what it already
 * exposes (its commit statistics, its segments): group-commit flushes, durable-log writes and applies.
 * Types only, with no dependency, so that the storage layer may take one without importing the
 * metrics library (store-metrics.ts implements it).
 */

/** Told by the storage engine about its writes. Every method is cheap and never throws. */
export interface StorageObserver {
  /** A group-commit flush was made durable: the updates in it, its bytes, how long its write took. */
  flushed(updates: number, bytes: number, seconds: number): void;
  /** A record was written to the durable log (one synced write) in `seconds`. */
  logWritten(bytes: number, seconds: number): void;
  /** An apply put `writes` logged writes into LevelDB; the oldest of them had waited `lagSeconds` since its flush. */
  applied(writes: number, lagSeconds: number): void;
}

/** A store's figures read when its metrics are scraped: what the engine exposes today. */
export interface StoreStatsSource {
  /** Every hosted segment with its live entries and bytes (a scan of each; the metrics cache it). */
  listSegments(): Promise<ReadonlyArray<{ entryCount: string; bytes: string }>>;
  /** Group-commit flushes and the record writes in them; applies of logged writes and the writes in them. */
  readonly commitStats: { flushes: number; ops: number; applies: number; appliedOps: number };
  /** Bytes of the durable log held by writes not yet applied, when the engine tells. */
  readonly durableLogHeldBytes?: number;
}
