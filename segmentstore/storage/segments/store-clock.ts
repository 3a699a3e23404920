/**
 * The segment store's clock for expiry: the wall clock (or the one given), never going back. An entry
 * is expired once this clock passes its expiry time. Were the wall clock stepped back (NTP, a VM
 * resumed), entries already seen expired would be live again until it caught up, and the sweeper may
 * have removed some of them already. So the clock holds at the highest time it has given until the
 * wall clock passes it again: meanwhile time stands still for expiry, and an entry written then lives
 * its TTL from that highest time. The highest time is kept in the database too (by every expiry
 * sweep, and on close), so a store restarted while the wall clock is behind does not go back either.
 */
import type { ClassicLevel } from 'classic-level';
import { NS_META } from '../key-codec';

/** Where the highest time is kept: a metadata key of its own (segment metadata keys are 10 bytes long). */
const CLOCK_KEY = Buffer.from([NS_META, 0x63]);

/** A clock that never goes back. */
export class StoreClock {
  private highest = 0;

  constructor(private readonly wall: () => number) {}

  /** The time now: the wall clock's, or the highest time given before if that is later. */
  readonly now = (): number => {
    const t = this.wall();
    if (t > this.highest) this.highest = t;
    return this.highest;
  };

  /** Reads the highest time kept in `db` (none in a new database): the clock gives nothing earlier. */
  async restore(db: ClassicLevel<Buffer, Buffer>): Promise<void> {
    const kept = await db.get(CLOCK_KEY);
    if (kept && kept.length === 8) this.highest = Math.max(this.highest, Number(kept.readBigUInt64BE(0)));
  }

  /** Keeps the highest time in `db`; `sync` waits for the disk (on close), else the OS writes it. */
  async save(db: ClassicLevel<Buffer, Buffer>, sync: boolean): Promise<void> {
    const record = Buffer.allocUnsafe(8);
    record.writeBigUInt64BE(BigInt(this.now()), 0);
    await db.put(CLOCK_KEY, record, { sync });
  }
}
