/**
 * Point reads of many keys (any families) of one segment, in request order, for `SegmentEngine.get`.
 * A key with a staged write answers with that write, but only once its batch is durable: a reader
 * never sees a write that a crash could still take back. If that batch fails, the read starts over.
 * A write that is durable and not yet applied to LevelDB answers at once from the overlay.
 */
import type { ClassicLevel } from 'classic-level';
import { ErrorCodes } from '../../proto/error-codes';
import type { Entry, GetResponse } from '../../proto/messages';
import { KvtFault } from '../../proto/runtime/status';
import type { FamilyStore, StagedBatch } from './family-store';
import { dataKey, valueBytes, valueExpiresAt, valueSequence } from './key-codec';
import type { Overlay, OverlayEntry } from './overlay';
import type { PageCaps } from './page-sink';
import type { checkGetKeys } from './read-validation';
import type { SegmentState } from './segment-state';

const EMPTY = Buffer.alloc(0);
/** Keys read at once by a Get: bounds its memory (64 values of at most 1 MiB) before the budget is checked. */
const GET_SLICE_KEYS = 64;

/** The checked keys of a Get. */
type KeyRefs = ReturnType<typeof checkGetKeys>;

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
    if (refs.length <= GET_SLICE_KEYS) return { entries: admitted(await this.readKeys(seg, refs), budget) };
    const entries: Entry[] = [];
    for (let from = 0; from < refs.length; from += GET_SLICE_KEYS) {
      const slice = await this.readKeys(seg, refs.slice(from, from + GET_SLICE_KEYS));
      const taken = admitted(slice, budget);
      for (const e of taken) entries.push(e);
      if (taken.length < slice.length) break;
    }
    return { entries };
  }

  /** Reads `refs` (checked keys of `seg`) at once; see the module comment. */
  private async readKeys(seg: SegmentState, refs: KeyRefs, attempt = 1): Promise<Entry[]> {
    const now = this.clock();
    const entries = new Array<Entry>(refs.length);
    const missing: Buffer[] = [];
    const slots: number[] = [];
    // The batches of staged writes seen that are not durable yet: the answer waits for them.
    const waitFor = new Set<StagedBatch>();
    const familyReads: Promise<void>[] = [];
    for (let i = 0; i < refs.length; i++) {
      const ref = refs[i];
      if (ref.family !== '') {
        // Keyed families are chunked: the chunk holding the key answers (see FamilyStore.read).
        familyReads.push(this.families.read(seg, ref.family, ref.key, now).then(({ entry, staged }) => {
          if (staged) waitFor.add(staged);
          entries[i] = entry ? foundEntry(ref.key, entry.value, entry.sequence) : notFound(ref.key);
        }));
        continue;
      }
      const key = dataKey(seg.dataPrefix, ref.family, ref.key);
      const pending = this.overlay.get(key.toString('latin1'));
      if (!pending) {
        missing.push(key);
        slots.push(i);
        continue;
      }
      if (pending.batch && !pending.batch.durable) waitFor.add(pending.batch);
      entries[i] = stagedEntry(ref.key, pending, now);
    }
    if (familyReads.length > 0) await Promise.all(familyReads);
    if (missing.length > 0) fillStored(entries, refs, slots, await this.db.getMany(missing), now);
    for (const batch of waitFor) {
      if (await batch.done.then(() => true, () => false)) continue;
      if (attempt >= 3) throw new KvtFault(ErrorCodes.UNAVAILABLE, 'segment store cannot write to its storage; try again later');
      return this.readKeys(seg, refs, attempt + 1);
    }
    return entries;
  }
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
  return pending.value === null || (pending.expiresAt !== 0 && pending.expiresAt <= now)
    ? notFound(key)
    : foundEntry(key, pending.value, pending.sequence);
}

/** Answers the family-less keys at `slots` (indices into `refs` and `entries`) from their records as read, `stored`. */
function fillStored(entries: Entry[], refs: KeyRefs, slots: readonly number[], stored: readonly (Buffer | undefined)[], now: number): void {
  for (let j = 0; j < slots.length; j++) {
    const i = slots[j];
    const value = stored[j];
    const expiresAt = value ? valueExpiresAt(value) : 0;
    entries[i] = !value || (expiresAt !== 0 && expiresAt <= now)
      ? notFound(refs[i].key)
      : foundEntry(refs[i].key, valueBytes(value), valueSequence(value));
  }
}

/** The first of `entries` that `budget` admits (all of them, or those before the first refused). */
function admitted(entries: Entry[], budget: PageCaps): Entry[] {
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (!budget.admit(e.key.length + e.value.length)) return entries.slice(0, i);
  }
  return entries;
}
