/**
 * The recency window, enforced by the application (RESTBase's "app-enforced TTLs", seed 000): the
 * page's own family holds a timeline of when renders were superseded, and a later write culls what
 * has been superseded for longer than the window with range deletes in its own atomic update.
 *
 * Two kinds of timeline entry (key-layout.ts), each a true statement when written:
 * - a supersession `(T, P)`: written with a render higher than the latest render P it read, it says
 *   that at T every render ≤ P was superseded;
 * - a late write `(X, T)`: written with a render X below the latest, it says X was superseded at T
 *   (when it was written). It protects X from the supersession entries older than it.
 *
 * A cull takes the highest P* of the expired supersessions (T ≤ now − window) and deletes every
 * render ≤ P* — records, chunks and late-write entries — except the late writes not yet expired,
 * around which the range is cut; expired late writes above P* go one by one; the supersessions read
 * are consumed. Nothing expires by the table's TTL: an entry leaves only with the data it stands for,
 * so a page written once a month is culled at its next write (RESTBase's timeline expired first and
 * such pages grew without bound, T192689).
 *
 * Races only delay a cull: entries are true whatever was written meanwhile, and a late write landing
 * in a range a concurrent cull is about to delete is protected by the head key, which every late
 * write rewrites and every cull updates on condition of the version it read (a failed condition: the
 * write is retried, at last without a cull). A cull is best-effort and bounded (CULL_MAX_ITEMS
 * modifications); what it leaves, a later write takes.
 */
import type { KeyValueTable } from '../key-value-table';
import type { TableModification } from '../types';
import { Version } from '../version';
import { after, compareBytes, HEAD_KEY, KIND, keyOf, lateKey, POSITION_BYTES, readUint64, supersessionKey, uint64 } from './key-layout';

type Table = KeyValueTable<Uint8Array, Uint8Array>;
type Modification = TableModification<Uint8Array, Uint8Array>;

/** Timeline entries one write reads at most (one iterator page). */
export const TIMELINE_PAGE = 256;
/** Modifications one cull adds to a write at most. */
export const CULL_MAX_ITEMS = 64;

const MARK = Buffer.of(1);

/** A late write read from the timeline. */
export interface LateWrite {
  position: Buffer;
  time: number;
}

/** What one write reads of the timeline. */
export interface Timeline {
  /** The head's version (null: no head yet). */
  head: Version | null;
  /** Every late write (when `complete`), in key order: highest (rev, tid) first. */
  lates: LateWrite[];
  /** Expired supersessions read, oldest first: their keys and positions P. */
  expired: { key: Buffer; position: Buffer }[];
  /** False when the page ended among the late writes: some were not read, nor any supersession. */
  complete: boolean;
}

/** Reads the head, the late writes and the supersessions of time ≤ `cutoff`: one iterator page. */
export async function readTimeline(table: Table, title: string, cutoff: number): Promise<Timeline> {
  const to = cutoff >= 0 ? keyOf(KIND.SUPERSEDED, uint64(cutoff + 1)) : Buffer.of(KIND.SUPERSEDED);
  const timeline: Timeline = { head: null, lates: [], expired: [], complete: true };
  let items: { key: Uint8Array; value: Uint8Array; version: Version }[] = [];
  for await (const page of table.entryIterator(title, { from: HEAD_KEY, to, maxKeysAtOnce: TIMELINE_PAGE })) {
    items = page.items;
    break;
  }
  for (const e of items) {
    const key = Buffer.from(e.key);
    if (key[0] === KIND.HEAD) timeline.head = e.version;
    else if (key[0] === KIND.LATE) timeline.lates.push({ position: key.subarray(1), time: readUint64(e.value, 0) });
    else timeline.expired.push({ key, position: key.subarray(9, 9 + POSITION_BYTES) });
  }
  const last = items.at(-1);
  timeline.complete = items.length < TIMELINE_PAGE || last!.key[0] === KIND.SUPERSEDED;
  return timeline;
}

/**
 * The timeline entry a write of `position` adds, given the latest render's position before it (null
 * for an empty page): a supersession when it becomes the latest, a late write when it is below.
 */
export function supersessionOf(latest: Buffer | null, position: Buffer, now: number): { entry: Modification | null; late: boolean } {
  if (latest === null) return { entry: null, late: false };
  const order = compareBytes(position, latest);
  if (order < 0) return { entry: { type: 'put', key: supersessionKey(now, latest), value: MARK }, late: false };
  if (order === 0) return { entry: null, late: false };
  return { entry: { type: 'put', key: lateKey(position), value: uint64(now) }, late: true };
}

/** Removes every key of `kind` in [kind·from, kind·to) (to null: to the end of the kind), skipping none. */
function rangeOf(kind: number, from: Buffer, to: Buffer | null): Modification {
  return { type: 'removeRange', from: keyOf(kind, from), to: to === null ? Buffer.of(kind + 1) : keyOf(kind, to) };
}

/** The range deletes of every render ≤ `top` except `guards` (positions, ascending), per kind. */
function rangesBelow(top: Buffer, guards: Buffer[]): Modification[] {
  const mods: Modification[] = [];
  for (const kind of [KIND.RENDER, KIND.CHUNK, KIND.LATE]) {
    let from = top;
    for (const guard of guards) {
      if (compareBytes(from, guard) < 0) mods.push(rangeOf(kind, from, guard));
      from = after(guard);
    }
    mods.push(rangeOf(kind, from, null));
  }
  return mods;
}

/** The removal of one render with its chunks and its late-write entry. */
function removalOf(position: Buffer): Modification[] {
  return [
    { type: 'remove', key: keyOf(KIND.RENDER, position) },
    { type: 'removeRange', prefix: keyOf(KIND.CHUNK, position) },
    { type: 'remove', key: lateKey(position) },
  ];
}

/**
 * The modifications that cull what `timeline` shows expired at `cutoff`, to be applied before the
 * writes of the renders at positions `own` (so they never remove them): empty when nothing has expired or the cull would exceed
 * CULL_MAX_ITEMS.
 */
export function planCull(timeline: Timeline, cutoff: number, own: Buffer[]): Modification[] {
  let top: Buffer | null = null;
  for (const e of timeline.expired) if (top === null || compareBytes(e.position, top) < 0) top = e.position;
  const mods: Modification[] = [];
  if (top !== null) {
    const highest = top;
    const guards = timeline.lates.filter((l) => l.time > cutoff && compareBytes(l.position, highest) >= 0).map((l) => l.position);
    const ranges = rangesBelow(highest, guards);
    if (ranges.length + 1 <= CULL_MAX_ITEMS) {
      mods.push(...ranges, { type: 'removeRange', from: Buffer.of(KIND.SUPERSEDED), to: after(timeline.expired.at(-1)!.key) });
    } else {
      top = null; // too many guards for one cull: leave the range (and its entries) to a later write
    }
  }
  for (const late of timeline.lates) {
    if (late.time > cutoff || own.some((o) => late.position.equals(o)) || (top !== null && compareBytes(late.position, top) >= 0)) continue;
    if (mods.length + 3 > CULL_MAX_ITEMS) break;
    mods.push(...removalOf(late.position));
  }
  return mods;
}

/** The head's update: on condition of the version read when it goes with a cull. */
export function headUpdate(now: number, condition: Version | null | undefined): Modification {
  return condition === undefined ? { type: 'put', key: HEAD_KEY, value: uint64(now) } : { type: 'put', key: HEAD_KEY, value: uint64(now), version: condition ?? Version.NOT_EXISTS };
}
