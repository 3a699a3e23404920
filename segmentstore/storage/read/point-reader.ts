/**
 * Point reads of many keys (any families) of one segment, in request order, for `SegmentEngine.get`.
 * A Get answers the state at one instant: every key is located synchronously, in memory (a staged or
 * cached write, a family's directory) or as a LevelDB record to read. The records of the first 64
 * keys are read in the same synchronous turn, with LevelDB's synchronous get: the overlay held no write
 * of them, and nothing can stage one before the turn ends, so LevelDB holds what they were located as
 * and no snapshot is needed (taking and releasing one cost a get ~10 µs of CPU, as much as the read).
 * Whatever is read after an await (the keys beyond, a family's floor chunk sought with an iterator)
 * is read from one explicit LevelDB snapshot taken in that same turn. A key with a staged write answers with
 * that write, but only once its batch is durable: a reader never sees a write that a crash could still
 * take back. If that batch fails, the read starts over. A write that is durable and not yet applied
 * to LevelDB answers at once from the overlay (it stays there until LevelDB holds it).
 */
import type { ClassicLevel } from 'classic-level';
import { ErrorCodes } from '../../../proto/error-codes';
import type { Entry, GetResponse } from '../../../proto/messages';
import { KvtFault } from '../../../server-kit/fault';
import { isSoleChunk } from '../chunks/chunk-codec';
import { ABSENT_BEYOND, ChunkLookups, entryAt } from '../chunks/chunk-lookup';
import { FamilyStore, StagedBatch } from '../chunks/family-store';
import { dataKey, valueBytes, valueExpiresAt, valueSequence } from '../key-codec';
import type { Overlay, OverlayEntry } from '../overlay';
import type { PageCaps } from './page-caps';
import type { checkGetKeys } from './read-validation';
import type { SegmentState } from '../segments/segment-state';
import { readRecords, type Snapshot } from './snapshot-view';

const EMPTY = Buffer.alloc(0);
/** Keys read from LevelDB at once by a Get: bounds its memory (64 values of at most 1 MiB) before the budget is checked. */
const GET_SLICE_KEYS = 64;

/** The checked keys of a Get. */
type KeyRefs = ReturnType<typeof checkGetKeys>;

/**
 * A LevelDB record a key's answer comes from: the key's own record, its chunk's, or (`head`) its
 * family's first chunk, and when that does not tell, the family's floor chunk of the key.
 */
interface StoredRead {
  index: number;
  /** The record to get: the key's own, its chunk's, or the family's first chunk's (the prefix). */
  key: Buffer;
  kind: 'plain' | 'chunk' | 'head';
}

/** The keys of a Get as located at one instant (see the module comment). */
interface Located {
  now: number;
  /** Answers known from memory, by request index. */
  answers: (Entry | undefined)[];
  /** What LevelDB must answer, in request order. */
  reads: StoredRead[];
  /** The batches of staged writes seen that are not durable yet: the answer waits for them. */
  waitFor: Set<StagedBatch>;
  /**
   * The instant the keys were located, in LevelDB: taken with the locating when keys beyond the first
   * slice are to be read, or in the turn of the first slice when a floor chunk must be sought.
   */
  snapshot: Snapshot | undefined;
  /** Lookups in the chunk records of this Get: each record is walked or indexed once. */
  lookups: ChunkLookups;
}

/** Reads keys of the segments of one engine (staged writes from the overlay, the rest from LevelDB). */
export class PointReader {
  constructor(
    private readonly db: ClassicLevel<Buffer, Buffer>,
    private readonly overlay: Overlay,
    private readonly families: FamilyStore,
    private readonly clock: () => number,
  ) {}

  /**
   * The entries of `refs` (checked keys of `seg`) in request order, as many as `budget` admits (the
   * rest are left out of the answer; see GetResponse).
   */
  async get(seg: SegmentState, refs: KeyRefs, budget: PageCaps): Promise<GetResponse> {
    // Updates that arrived earlier but still wait to be staged (reading first) come before this read.
    if (seg.stagingTail) await seg.stagingTail;
    for (let attempt = 1; ; attempt++) {
      const located = this.locate(seg, refs);
      let entries: Entry[];
      try {
        entries = await this.readStored(refs, located, budget);
      } finally {
        await located.snapshot?.close();
      }
      if (await allDurable(located.waitFor)) return { entries };
      if (attempt >= 3) throw new KvtFault(ErrorCodes.UNAVAILABLE, 'segment store cannot write to its storage; try again later');
    }
  }

  /** Locates every key of `refs` at this instant, synchronously (see the module comment). */
  private locate(seg: SegmentState, refs: KeyRefs): Located {
    const now = this.clock();
    const answers = new Array<Entry | undefined>(refs.length);
    const reads: StoredRead[] = [];
    const waitFor = new Set<StagedBatch>();
    const lookups = new ChunkLookups();
    for (let i = 0; i < refs.length; i++) {
      const ref = refs[i];
      if (ref.family !== '') {
        // Keyed families are chunked: the chunk holding the key answers (see FamilyStore.locate).
        const where = this.families.locate(seg, ref.family, ref.key, now, lookups);
        if (where.found) {
          const { entry, staged } = where.found;
          if (staged) waitFor.add(staged);
          answers[i] = entry ? foundEntry(ref.key, entry.value, entry.sequence) : notFound(ref.key);
        } else if (where.chunkKey) reads.push({ index: i, key: where.chunkKey, kind: 'chunk' });
        else reads.push({ index: i, key: where.headOf!, kind: 'head' });
        continue;
      }
      const key = dataKey(seg.dataPrefix, ref.family, ref.key);
      const pending = this.overlay.get(key.toString('latin1'));
      if (!pending) {
        reads.push({ index: i, key, kind: 'plain' });
        continue;
      }
      if (pending.batch && !pending.batch.durable) waitFor.add(pending.batch);
      answers[i] = stagedEntry(ref.key, pending, now);
    }
    // Records of the first slice are read in this very turn (readStored), where LevelDB holds what
    // they were located as without a snapshot; later slices are read after awaits, from one.
    const later = reads.length > 0 && reads[reads.length - 1].index >= GET_SLICE_KEYS;
    return { now, answers, reads, waitFor, snapshot: later ? this.db.snapshot() : undefined, lookups };
  }

  /**
   * The answers in request order, LevelDB's read `GET_SLICE_KEYS` keys at a time (the first slice in
   * this turn, the others from the snapshot), until `budget` refuses one.
   */
  private async readStored(refs: KeyRefs, located: Located, budget: PageCaps): Promise<Entry[]> {
    const { answers, reads } = located;
    const out: Entry[] = [];
    let r = 0;
    for (let from = 0; from < refs.length; from += GET_SLICE_KEYS) {
      const to = Math.min(refs.length, from + GET_SLICE_KEYS);
      const slice: StoredRead[] = [];
      while (r < reads.length && reads[r].index < to) slice.push(reads[r++]);
      // The first slice is read in the turn of the locating (nothing awaited since): see readSlice.
      if (slice.length > 0) await this.readSlice(refs, located, slice, from === 0);
      for (let i = from; i < to; i++) {
        const e = answers[i]!;
        answers[i] = undefined;
        if (!budget.admit(e.key.length + e.value.length)) return out;
        out.push(e);
      }
    }
    return out;
  }

  /**
   * Answers the keys of `slice` as located (see the module comment): one read of the distinct records named (a chunk
   * asked for by several keys is read once), then, for a key whose family's first chunk does not tell
   * (several chunks, the key above its last), a reverse seek for the floor chunk. `current`: read in
   * the same synchronous turn as the keys were located, when every chunk record read is the chunk as it
   * stands (a write of it since would be in the overlay, which locating found empty for it, and
   * nothing could stage one in between): those go to the chunk cache (FamilyStore.cacheRead).
   */
  private async readSlice(refs: KeyRefs, located: Located, slice: readonly StoredRead[], current: boolean): Promise<void> {
    const { answers, now, lookups } = located;
    const slots = new Map<string, number>();
    const keys: Buffer[] = [];
    const chunkIds: (string | undefined)[] = [];
    const slotOf = slice.map((s) => {
      if (s.kind === 'plain') return keys.push(s.key) - 1;
      const id = s.key.toString('latin1');
      let slot = slots.get(id);
      if (slot === undefined) {
        slot = keys.push(s.key) - 1;
        chunkIds[slot] = id;
        slots.set(id, slot);
      }
      return slot;
    });
    const records = readRecords(this.db, keys, located.snapshot);
    if (current)
      for (let i = 0; i < records.length; i++) {
        const id = chunkIds[i];
        const record = records[i];
        if (id !== undefined && record !== undefined) this.families.cacheRead(id, record);
      }
    const floors: StoredRead[] = [];
    slice.forEach((s, n) => {
      const key = refs[s.index].key;
      const record = records[slotOf[n]];
      if (s.kind === 'plain') answers[s.index] = storedAnswer(key, record, now);
      else if (!record) answers[s.index] = notFound(key);
      else {
        const at = lookups.seek(record, key);
        if (at === ABSENT_BEYOND && s.kind === 'head' && !isSoleChunk(record)) floors.push(s);
        else answers[s.index] = chunkAnswer(key, record, at, now);
      }
    });
    if (floors.length === 0) return;
    // Still the turn of the locating when `current`: a family read by its first chunk has no write
    // LevelDB lacks (its directory would be in memory), so a snapshot taken now is that instant.
    const snapshot = (located.snapshot ??= this.db.snapshot());
    const found = await Promise.all(
      floors.map((s) => this.db.iterator({ gte: s.key, lte: Buffer.concat([s.key, refs[s.index].key]), reverse: true, limit: 1, keyEncoding: 'buffer', valueEncoding: 'buffer', snapshot }).all()),
    );
    floors.forEach((s, n) => {
      const key = refs[s.index].key;
      const record = found[n].length > 0 ? found[n][0][1] : undefined;
      answers[s.index] = record ? chunkAnswer(key, record, lookups.seek(record, key), now) : notFound(key);
    });
  }
}

/** Resolves true once every batch of `batches` is durable, false as soon as one failed. */
export async function allDurable(batches: Set<StagedBatch>): Promise<boolean> {
  for (const batch of batches)
    if (
      !(await batch.done.then(
        () => true,
        () => false,
      ))
    )
      return false;
  return true;
}

/** The answer for a key that has an entry. */
function foundEntry(key: Buffer, value: Buffer, sequence: number): Entry {
  return { found: true, key, value, sequence: String(sequence) };
}

/** The answer for a key without an entry. */
function notFound(key: Buffer): Entry {
  return { found: false, key, value: EMPTY, sequence: '' };
}

/** The answer for family-less `key` from its staged write `pending` (a removal or an expired entry: not found). */
function stagedEntry(key: Buffer, pending: OverlayEntry, now: number): Entry {
  return pending.value === null || (pending.expiresAt !== 0 && pending.expiresAt <= now) ? notFound(key) : foundEntry(key, pending.value, pending.sequence);
}

/** The answer for family-less `key` from its record as read (undefined: none). */
function storedAnswer(key: Buffer, value: Buffer | undefined, now: number): Entry {
  const expiresAt = value ? valueExpiresAt(value) : 0;
  return !value || (expiresAt !== 0 && expiresAt <= now) ? notFound(key) : foundEntry(key, valueBytes(value), valueSequence(value));
}

/** The answer for keyed-family `key` from the chunk record holding it, where a lookup found it (`at`, negative: absent). */
function chunkAnswer(key: Buffer, record: Buffer, at: number, now: number): Entry {
  const e = at >= 0 ? entryAt(record, at, now) : undefined;
  return e ? foundEntry(key, e.value, e.sequence) : notFound(key);
}
