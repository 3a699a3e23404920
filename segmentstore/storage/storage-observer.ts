/**
 * What the storage engine tells an observer as it writes: each group-commit flush made durable, each
 * synced write of the durable log, each apply of logged writes to LevelDB. A type only, so that the
 * engine reports to the segment store's metrics (server-kit/metrics/store-metrics.ts, which has these
 * methods) without importing them: storage imports no metrics library and no gRPC. Told a few times
 * per flush, never per update.
 */

/** Told by the storage engine about its writes. Every method must be cheap and must not throw. */
export interface StorageObserver {
  /** A group-commit flush was made durable: the updates in it, the bytes of its writes, how long it took from its start until durable. */
  flushed(updates: number, bytes: number, seconds: number): void;
  /** A record of `bytes` was written to the durable log (one synced write) in `seconds`. */
  logWritten(bytes: number, seconds: number): void;
  /** An apply put `writes` logged writes into LevelDB; the oldest of them had waited `lagSeconds` since its flush was durable. */
  applied(writes: number, lagSeconds: number): void;
}
