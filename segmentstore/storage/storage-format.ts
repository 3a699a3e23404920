/**
 * The storage format stamp of a segment store's database: the `m` record (see key-codec.ts) names the
 * format the data was written in, and an engine opens only a database in the format it writes.
 */
import type { ClassicLevel } from 'classic-level';
import { NS_META } from './key-codec';

/** The storage format this engine writes: 2 = keyed families in chunks (1 stored one record per entry). */
export const STORAGE_FORMAT = 2;
const FORMAT_KEY = Buffer.from([NS_META]);

/** Stamps a new database with {@link STORAGE_FORMAT}; refuses one written in another format. */
export async function checkFormat(db: ClassicLevel<Buffer, Buffer>, location: string): Promise<void> {
  const stamp = await db.get(FORMAT_KEY);
  if (stamp) {
    const format = Number(stamp.toString('utf8'));
    if (format !== STORAGE_FORMAT) throw new Error(`${location} holds kvt storage format ${format}; this segment store reads format ${STORAGE_FORMAT} only`);
    return;
  }
  const [any] = await db.keys({ limit: 1, keyEncoding: 'buffer' }).all();
  if (any) throw new Error(`${location} holds kvt storage format 1 (one record per entry); this segment store reads format ${STORAGE_FORMAT} only: export the data with the older kvt and import it`);
  await db.put(FORMAT_KEY, Buffer.from(String(STORAGE_FORMAT)), { sync: true });
}
