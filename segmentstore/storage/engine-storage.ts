/**
 * Opening what a segment engine keeps on disk: its LevelDB (refused with {@link StorageLockedError}
 * while another process has it), checked for its storage format, with the durable log replayed into
 * it (log-recovery.ts) and the store's clock restored, before anything reads it.
 */
import { ClassicLevel } from 'classic-level';
import type { DurableLog } from './log/durable-log';
import { openLog } from './log/log-recovery';
import { DEFAULT_LOG_BYTES, DEFAULT_WRITE_BUFFER_BYTES, SegmentEngineOptions } from './segments/segment-state';
import { checkFormat } from './segments/storage-format';
import { StoreClock } from './segments/store-clock';

/** Thrown by `SegmentEngine.open` when another process holds the LevelDB lock. */
export class StorageLockedError extends Error {
  override readonly name = 'StorageLockedError';
  readonly code = 'LEVEL_LOCKED';
  constructor(
    readonly location: string,
    options?: { cause?: unknown },
  ) {
    super(`${location} is in use by another process`, options);
  }
}

function isLocked(err: unknown): boolean {
  for (let e = err as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'LEVEL_LOCKED') return true;
  }
  return false;
}

/** An engine's storage, opened and recovered. */
export interface EngineStorage {
  db: ClassicLevel<Buffer, Buffer>;
  /** None with `logBytes` 0. */
  log: DurableLog | undefined;
  clock: StoreClock;
  /** Closes the log and LevelDB (for an engine that failed to start on them). */
  close(): Promise<void>;
}

/**
 * Opens (creating if needed) the LevelDB at `location` and its durable log, and replays the log.
 * @throws StorageLockedError when another process has the database open.
 */
export async function openStorage(location: string, options: SegmentEngineOptions): Promise<EngineStorage> {
  const writeBufferSize = options.writeBufferBytes ?? DEFAULT_WRITE_BUFFER_BYTES;
  const db = new ClassicLevel<Buffer, Buffer>(location, { keyEncoding: 'buffer', valueEncoding: 'buffer', writeBufferSize });
  try {
    await db.open();
  } catch (err) {
    if (isLocked(err)) throw new StorageLockedError(location, { cause: err });
    throw err;
  }
  let log: DurableLog | undefined;
  const close = async (): Promise<void> => {
    await log?.close();
    await db.close();
  };
  try {
    await checkFormat(db, location);
    log = await openLog(db, location, options.logBytes ?? DEFAULT_LOG_BYTES, options.observer);
    const clock = new StoreClock(options.clock ?? Date.now);
    await clock.restore(db);
    return { db, log, clock, close };
  } catch (err) {
    await close();
    throw err;
  }
}
