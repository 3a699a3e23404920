/**
 * Opening the durable log at engine start: the records after LevelDB's checkpoint (acknowledged
 * writes LevelDB did not hold yet when the store stopped) are applied to LevelDB, in order, before
 * anything reads it. Replaying a record LevelDB already holds writes the same values again, so a
 * crash during replay only means replaying again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ClassicLevel } from 'classic-level';
import { DurableLog, LOG_FILE, RecoveredRecord } from './durable-log';
import { addWrite, CHECKPOINT_KEY, decodeCheckpoint, decodeOps, encodeCheckpoint } from './log-applier';
import type { StorageObserver } from '../storage-observer';

/** Replayed writes go to LevelDB in batches of about this many bytes (bounds the memory of one). */
const REPLAY_BATCH_BYTES = 32 * 1024 * 1024;

/**
 * Opens the log of the engine at `location` (its LevelDB directory) and replays it into `db`;
 * resolves the log, or undefined when `capacity` is 0 (no log: a log left by an earlier run is
 * replayed and removed). `observer` is told of the records written from then on.
 */
export async function openLog(db: ClassicLevel<Buffer, Buffer>, location: string, capacity: number, observer?: StorageObserver): Promise<DurableLog | undefined> {
  const checkpoint = decodeCheckpoint(await db.get(CHECKPOINT_KEY));
  if (capacity <= 0 && !checkpoint) return undefined;
  // (Without a log from now on, the one left is only read: any capacity will do, the file stays as it is.)
  const { log, records } = await DurableLog.open(location, capacity > 0 ? capacity : 1, checkpoint, observer);
  try {
    await replay(db, records);
    if (capacity > 0) {
      // A new log (or one replayed) starts from here: written synced before the first record can be.
      await db.put(CHECKPOINT_KEY, encodeCheckpoint(log.next), { sync: true });
      log.release(log.next);
      return log;
    }
    await db.del(CHECKPOINT_KEY, { sync: true });
    await log.close();
    fs.rmSync(path.join(location, LOG_FILE), { force: true });
    return undefined;
  } catch (err) {
    await log.close();
    throw err;
  }
}

/** Applies the writes of `records` to `db` in order, each LevelDB batch with the checkpoint after its last record. */
async function replay(db: ClassicLevel<Buffer, Buffer>, records: readonly RecoveredRecord[]): Promise<void> {
  let chain = db.batch();
  let bytes = 0;
  for (let i = 0; i < records.length; i++) {
    const { payload, next } = records[i];
    decodeOps(payload, (key, value) => addWrite(chain, key, value));
    bytes += payload.length;
    if (bytes >= REPLAY_BATCH_BYTES || i === records.length - 1) {
      chain.put(CHECKPOINT_KEY, encodeCheckpoint(next));
      await chain.write({ sync: true });
      chain = db.batch();
      bytes = 0;
    }
  }
  await chain.close();
}
