/**
 * The segments hosted by the engine: their records in LevelDB and their in-memory state. Create and
 * delete are idempotent and serialized per segment id. A delete first marks the record `deleting`,
 * then clears the data range and makes the clear durable, then removes the record, so a crash or a
 * power cut midway is finished on the next open.
 */
import type { ClassicLevel } from 'classic-level';
import { decodeMetaKey, NS_META, prefixSuccessor, readU64 } from '../key-codec';
import { SegmentRecord, SegmentState } from './segment-state';

const META_START = Buffer.from([NS_META]);
const META_END = Buffer.from([NS_META + 1]);

/** Hosted segments by decimal id. */
export class SegmentCatalog {
  private readonly segments = new Map<string, SegmentState>();
  private readonly locks = new Map<string, Promise<unknown>>();

  /**
   * @param settled resolves once LevelDB holds every write of a segment staged so far, and rejects if
   *   that cannot be known (the engine failed): a deleted segment's data is cleared from LevelDB only
   *   after that, so no later apply, and no replay of the log, brings any of it back
   */
  constructor(
    private readonly db: ClassicLevel<Buffer, Buffer>,
    private readonly settled: (seg: SegmentState) => Promise<void>,
  ) {}

  /** Loads every record and finishes interrupted deletions. */
  async load(): Promise<void> {
    const records = new Map<string, SegmentRecord>();
    const sequences = new Map<string, number>();
    for await (const [key, value] of this.db.iterator({ gte: META_START, lt: META_END, keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
      const meta = decodeMetaKey(key);
      if (meta?.kind === 'record') records.set(meta.segmentId, JSON.parse(value.toString('utf8')) as SegmentRecord);
      else if (meta?.kind === 'sequence') sequences.set(meta.segmentId, readU64(value, 0));
    }
    for (const [id, record] of records) {
      const seg = new SegmentState(id, record, sequences.get(id) ?? 0);
      if (record.state === 'deleting') await this.erase(seg);
      else this.segments.set(id, seg);
    }
  }

  /** The live segment `id`, if hosted. */
  get(id: string): SegmentState | undefined {
    return this.segments.get(id);
  }

  /** Every hosted segment in ascending id order. */
  all(): SegmentState[] {
    return [...this.segments.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0));
  }

  /** Creates segment `id`; false when it already exists. A re-created segment continues its old sequence. */
  create(id: string, table: string, now: number): Promise<boolean> {
    return this.serial(id, async () => {
      if (this.segments.has(id)) return false;
      const probe = new SegmentState(id, { table, state: 'active', createdAtMs: now }, 0);
      const stored = await this.db.get(probe.sequenceKey);
      probe.lastSequence = stored ? readU64(stored, 0) : 0;
      await this.db.put(probe.recordKey, Buffer.from(JSON.stringify(probe.record)), { sync: true });
      this.segments.set(id, probe);
      return true;
    });
  }

  /** Deletes segment `id` and all its data; false when it does not exist. */
  delete(id: string): Promise<boolean> {
    return this.serial(id, async () => {
      const seg = this.segments.get(id);
      if (!seg) return false;
      // From here on nothing new is staged for it; wait for what already was.
      seg.deleted = true;
      this.segments.delete(id);
      try {
        await this.settled(seg);
      } catch (err) {
        // Refused: the segment stays, with everything acknowledged (a restart replays the log).
        seg.deleted = false;
        this.segments.set(id, seg);
        throw err;
      }
      await this.erase(seg);
      return true;
    });
  }

  /** Resolves once no create or delete is in progress. */
  async idle(): Promise<void> {
    while (this.locks.size > 0) await Promise.allSettled([...this.locks.values()]);
  }

  private async erase(seg: SegmentState): Promise<void> {
    seg.record = { ...seg.record, state: 'deleting' };
    await this.db.put(seg.recordKey, Buffer.from(JSON.stringify(seg.record)), { sync: true });
    const range = { gte: seg.dataPrefix, lt: prefixSuccessor(seg.dataPrefix)! };
    await this.db.clear({ ...range, keyEncoding: 'buffer' });
    // classic-level writes a clear without sync, and LevelDB syncs only the log file it writes now:
    // part of the clear may sit in an older log file that a power cut loses, while the synced record
    // delete below survives, leaving data no record owns. Compacting the range first writes the
    // memtable, the clear with it, to a synced table file (and then compacts the range away).
    await this.db.compactRange(range.gte, range.lt, { keyEncoding: 'buffer' });
    await this.db.del(seg.recordKey, { sync: true });
  }

  private serial<T>(id: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(id) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.catch(() => undefined);
    this.locks.set(id, tail);
    void tail.then(() => {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    });
    return result;
  }
}
