/**
 * The storage format stamp of a segment store's database: the `m` record (see key-codec.ts) names the
 * format the data was written in, and an engine opens only a database in the format it writes.
 */
import type { ClassicLevel } from 'classic-level';
import { NS_META } from '../key-codec';

/**
 * The storage format this engine writes: 3 = format 2 with a durable log beside LevelDB, whose
 * records after the checkpoint LevelDB does not hold yet (durable-log.ts); 2 = keyed families in
 * chunks; 1 stored one record per entry. An engine of format 2 would ignore the log and serve a
 * database without the writes it holds, hence the new number.
 */
export const STORAGE_FORMAT = 3;
/** The format before the durable log: the same LevelDB layout, so it is opened and stamped 3. */
const FORMAT_WITHOUT_LOG = 2;
const FORMAT_KEY = Buffer.from([NS_META]);

/** Stamps a new database with {@link STORAGE_FORMAT}; refuses one written in another format (2 is upgraded). */
export async function checkFormat(db: ClassicLevel<Buffer, Buffer>, location: string): Promise<void> {
  const stamp = await db.get(FORMAT_KEY);
  if (stamp) {
    const format = Number(stamp.toString('utf8'));
    if (format === FORMAT_WITHOUT_LOG) {
      await db.put(FORMAT_KEY, Buffer.from(String(STORAGE_FORMAT)), { sync: true });
      return;
    }
    if (format !== STORAGE_FORMAT) throw new Error(`${location} holds kvt storage format ${format}; this segment store reads formats ${FORMAT_WITHOUT_LOG} and ${STORAGE_FORMAT} only`);
    return;
  }
  const [any] = await db.keys({ limit: 1, keyEncoding: 'buffer' }).all();
  if (any)
    throw new Error(
      `${location} holds kvt storage format 1 (one record per entry); this segment store reads formats ${FORMAT_WITHOUT_LOG} and ${STORAGE_FORMAT} only: export the data with the older kvt and import it`,
    );
  await db.put(FORMAT_KEY, Buffer.from(String(STORAGE_FORMAT)), { sync: true });
}
