/**
 * The storage format stamp of a segment store's database: the `m` record (see key-codec.ts) names the
 * format the data was written in, and an engine opens only a database in the format it writes.
 */
import type { ClassicLevel } from 'classic-level';
import { NS_META } from '../key-codec';

/**
 * The storage format this engine writes: 4 = format 3 whose families' first chunks may be marked as
 * their family's only chunk (the top bit of a chunk record's count, chunk-codec.ts), which an engine
 * of format 3 would read as a count of two billion entries; 3 = format 2 with a durable log beside
 * LevelDB, whose records after the checkpoint LevelDB does not hold yet (durable-log.ts); 2 = keyed
 * families in chunks; 1 stored one record per entry. An engine of format 2 would ignore the log and
 * serve a database without the writes it holds.
 */
export const STORAGE_FORMAT = 4;
/**
 * Formats this engine opens and stamps {@link STORAGE_FORMAT}: 2 (before the durable log) and 3 have the
 * same LevelDB layout and no marked chunk, which reads as "maybe more chunks" (a family is then loaded
 * with a seek until its first chunk is written again, which marks it).
 */
const UPGRADED_FORMATS: readonly number[] = [2, 3];
const FORMAT_KEY = Buffer.from([NS_META]);
const READS = `${UPGRADED_FORMATS.join(', ')} and ${STORAGE_FORMAT}`;

/** Stamps a new database with {@link STORAGE_FORMAT}; refuses one written in another format (2 and 3 are upgraded). */
export async function checkFormat(db: ClassicLevel<Buffer, Buffer>, location: string): Promise<void> {
  const stamp = await db.get(FORMAT_KEY);
  if (stamp) {
    const format = Number(stamp.toString('utf8'));
    if (UPGRADED_FORMATS.includes(format)) {
      await db.put(FORMAT_KEY, Buffer.from(String(STORAGE_FORMAT)), { sync: true });
      return;
    }
    if (format !== STORAGE_FORMAT) throw new Error(`${location} holds kvt storage format ${format}; this segment store reads formats ${READS} only`);
    return;
  }
  const [any] = await db.keys({ limit: 1, keyEncoding: 'buffer' }).all();
  if (any) throw new Error(`${location} holds kvt storage format 1 (one record per entry); this segment store reads formats ${READS} only: export the data with the older kvt and import it`);
  await db.put(FORMAT_KEY, Buffer.from(String(STORAGE_FORMAT)), { sync: true });
}
