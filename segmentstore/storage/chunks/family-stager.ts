/**
 * Staging a checked update of a keyed family into chunk records, once its directory and the records
 * of the chunks it touches are in memory (family-store.ts finds and reads them): conditions checked
 * against the state before the update, sequences and expiries given in modification order, and the
 * rewritten chunks (split when they outgrow the limits, dropped when emptied) put into the current
 * group-commit batch and the overlay, with the directory changed to match.
 *
 * A batch with strictly ascending keys and no range removal (the usual) is merged into each chunk
 * (chunk-merge.ts), and so is a batch of keys in another order, once sorted (its sequences and its
 * condition failures still follow the order it was sent in); a batch that removes a range goes
 * through a ChunkWork per chunk (chunk-work.ts).
 */
import { ErrorCodes } from '../../../proto/error-codes';
import { KvtFault } from '../../../server-kit/fault';
import type { ByteLru } from '../byte-lru';
import { encodeChunk, isSoleChunk, markSole, splitChunk } from './chunk-codec';
import { ChunkMerge, KeyOrder, Stamps } from './chunk-merge';
import { ChunkWork } from './chunk-work';
import type { FamilyDirectory } from './family-directory';
import type { CommitBatch } from '../log/commit-batch';
import { expiryKey } from '../key-codec';
import { inBounds, KeyBounds } from '../key-range';
import type { OverlayEntry } from '../overlay';
import type { SegmentState } from '../segments/segment-state';
import { checkCondition, checkConditions, ensureSequenceRecord, StageContext, StagedUpdate } from '../update-stager';
import type { CheckedModification } from '../validation';

const EMPTY = Buffer.alloc(0);

/** The chunks an update touches, in ascending order, with what is known of their contents. */
export interface ChunkPlan {
  /** Chunk index per modification (-1 for range removals). */
  slots: number[];
  /** Touched chunk indices, ascending; index 0 of an empty family is the chunk about to be created. */
  touched: number[];
  /** Record of each touched chunk (same order): null = empty or new, undefined = not read yet. */
  contents: (Buffer | null | undefined)[];
}

/** The user-key bounds of range removal `m`. */
export function rangeBounds(m: CheckedModification): KeyBounds {
  return { prefix: m.rangePrefix, from: m.rangeFrom, to: m.rangeTo, toInclusive: false, reverse: false };
}

/**
 * True when chunk `c`, empty, is all that is left of the family: a first chunk kept empty to anchor
 * later ones (see FamilyStager.writeEmptied) whose later chunks this update removed. It goes too,
 * although the update did not change it, so that a family whose every key is removed keeps no record.
 */
function emptiedFamily(dir: FamilyDirectory, c: number, empty: boolean): boolean {
  return empty && c === 0 && dir.keys.length === 1;
}

/**
 * Merges each touched chunk of `plan` with its run of `mods` (ascending keys), checking their
 * conditions on the way; throws the first failing one before anything is staged.
 */
function mergeRuns(seg: SegmentState, mods: readonly CheckedModification[], plan: ChunkPlan, now: number): ChunkMerge[] {
  const merges = new Array<ChunkMerge>(plan.touched.length);
  let i = 0;
  for (let j = 0; j < plan.touched.length; j++) {
    const from = i;
    while (i < mods.length && plan.slots[i] === plan.touched[j]) i++;
    merges[j] = ChunkMerge.run(seg, plan.contents[j] ?? null, mods, from, i, now);
  }
  // Only removals in an empty family touch no chunk: their keys are absent.
  for (; i < mods.length; i++) checkCondition(seg, mods[i], i, undefined);
  return merges;
}

/** The permutation that undoes `order`: `inverse(order)[order[k]] === k`. */
function inverse(order: readonly number[]): number[] {
  const at = new Array<number>(order.length);
  for (let k = 0; k < order.length; k++) at[order[k]] = k;
  return at;
}

/**
 * The condition failure an update in key order `sorted` reports: the first in modification order,
 * with its index as sent (the merge met them in key order). `err` when it is no condition failure.
 */
function firstFailure(seg: SegmentState, plan: ChunkPlan, sorted: KeyOrder, now: number, err: unknown): unknown {
  if (!(err instanceof KvtFault) || (err.code !== ErrorCodes.BAD_KEY_VERSION && err.code !== ErrorCodes.NO_SUCH_KEY)) return err;
  const work = new Map<number, ChunkWork>();
  for (let j = 0; j < plan.touched.length; j++) work.set(plan.touched[j], new ChunkWork(plan.contents[j] ?? null, now));
  const slotOf = new Array<number>(sorted.order.length);
  for (let k = 0; k < sorted.order.length; k++) slotOf[sorted.order[k]] = plan.slots[k];
  try {
    checkConditions(seg, sorted.original, (i) => work.get(slotOf[i])?.get(sorted.original[i].key.toString('latin1'))?.sequence);
  } catch (first) {
    return first;
  }
  return err;
}

/** Stages the updates of keyed families of one engine (the caller serializes those of a segment). */
export class FamilyStager {
  /** @param directories the family directories' cache, resized as a staged update changes one */
  constructor(
    private readonly ctx: StageContext,
    private readonly directories: ByteLru<FamilyDirectory>,
  ) {}

  /**
   * Checks and stages `mods` (any order; `ids` are their keys' latin1 forms, undefined for range
   * removals), their chunks as in `plan`: every touched chunk gets its entries as a ChunkWork, the
   * modifications are applied in order, and the changed chunks written.
   */
  apply(seg: SegmentState, dir: FamilyDirectory, mods: readonly CheckedModification[], ids: readonly (string | undefined)[], plan: ChunkPlan): StagedUpdate {
    this.checkWritable(seg, dir);
    const now = this.ctx.clock();
    const work = new Map<number, ChunkWork>();
    for (let j = 0; j < plan.touched.length; j++) work.set(plan.touched[j], new ChunkWork(plan.contents[j] ?? null, now));
    checkConditions(seg, mods, (i) => work.get(plan.slots[i])?.get(ids[i]!)?.sequence);

    const batch = this.ctx.committer.batch();
    ensureSequenceRecord(batch, seg);
    let firstSequence = 0;
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      if (m.type === 'REMOVE_RANGE') {
        const bounds = rangeBounds(m);
        for (const w of work.values()) w.removeWhere((e) => inBounds(e.key, bounds));
        continue;
      }
      const w = work.get(plan.slots[i]);
      if (m.type === 'REMOVE') {
        w?.remove(ids[i]!);
        continue;
      }
      const sequence = ++seg.lastSequence;
      firstSequence ||= sequence;
      w!.put(ids[i]!, { key: m.key, sequence, expiresAt: this.stageExpiry(batch, dir, m, now), value: m.value });
    }
    const weight = batch.weight;
    this.markHead(batch, dir, plan, this.writeChunks(batch, dir, plan.touched, work));
    return this.finish(batch, dir, mods, firstSequence, weight);
  }

  /**
   * {@link apply} for modifications with strictly ascending keys and no range removal (see
   * chunk-merge.ts): every touched chunk is merged with its run of modifications, conditions checked
   * on the way; then sequences are given in modification order and the chunks written. With `sorted`,
   * `mods` were sorted from the order sent, which sequences and a failed condition still follow.
   */
  applySorted(seg: SegmentState, dir: FamilyDirectory, mods: readonly CheckedModification[], plan: ChunkPlan, sorted?: KeyOrder): StagedUpdate {
    this.checkWritable(seg, dir);
    const now = this.ctx.clock();
    let merges: ChunkMerge[];
    try {
      merges = mergeRuns(seg, mods, plan, now);
    } catch (err) {
      throw sorted ? firstFailure(seg, plan, sorted, now, err) : err;
    }
    const batch = this.ctx.committer.batch();
    ensureSequenceRecord(batch, seg);
    const stamps: Stamps = { sequences: new Array<number>(mods.length), expiries: new Array<number>(mods.length) };
    const firstSequence = this.stamp(batch, seg, dir, mods, now, stamps, sorted?.order);
    const weight = batch.weight;
    this.markHead(batch, dir, plan, this.writeMerged(batch, dir, plan.touched, merges, stamps));
    return this.finish(batch, dir, sorted?.original ?? mods, firstSequence, weight);
  }

  /** Refuses to stage into a deleted segment or a directory a failed flush invalidated. */
  private checkWritable(seg: SegmentState, dir: FamilyDirectory): void {
    if (seg.deleted) throw new KvtFault(ErrorCodes.SEGMENT_NOT_FOUND, `segment ${seg.id} does not exist on this store`);
    if (!dir.valid) throw new KvtFault(ErrorCodes.UNAVAILABLE, 'segment store could not write to its storage; try again');
  }

  /**
   * Gives every PUT and INSERT of `mods` the next sequence of `seg` and its expiry at `now`, into
   * `stamps` (staging their expiry-index records); returns the first sequence (0 when none).
   */
  private stamp(batch: CommitBatch, seg: SegmentState, dir: FamilyDirectory, mods: readonly CheckedModification[], now: number, stamps: Stamps, order?: readonly number[]): number {
    let firstSequence = 0;
    // In modification order: `order[k]` is where `mods[k]` stood in the update as sent.
    const at = order ? inverse(order) : undefined;
    for (let i = 0; i < mods.length; i++) {
      const m = at ? at[i] : i;
      const mod = mods[m];
      if (mod.type === 'REMOVE') continue;
      const sequence = ++seg.lastSequence;
      firstSequence ||= sequence;
      stamps.sequences[m] = sequence;
      stamps.expiries[m] = this.stageExpiry(batch, dir, mod, now);
    }
    return firstSequence;
  }

  /** The expiry of PUT/INSERT `m` stamped at `now` (0 = never); stages its expiry-index record. */
  private stageExpiry(batch: CommitBatch, dir: FamilyDirectory, m: CheckedModification, now: number): number {
    const expiresAt = m.ttlMs > 0 ? now + m.ttlMs : 0;
    if (expiresAt !== 0) batch.put(expiryKey(expiresAt, Buffer.concat([dir.prefix, m.key])), EMPTY);
    return expiresAt;
  }

  /**
   * Ends staging an update whose chunks are in `batch`: it weighs its modifications (not the few
   * chunk records that carry them; `weightBefore` is the batch's weight before the chunks), and the
   * directory stays pinned until LevelDB holds the batch (or never will): until then a directory
   * loaded from LevelDB would miss its chunks.
   */
  private finish(batch: CommitBatch, dir: FamilyDirectory, mods: readonly CheckedModification[], firstSequence: number, weightBefore: number): StagedUpdate {
    batch.weight = Math.max(batch.weight, weightBefore + mods.length);
    dir.addPending();
    const settle = (): void => dir.settle();
    batch.applied.then(settle, settle);
    this.ctx.committer.staged();
    return { batch, firstSequence, mods };
  }

  /**
   * Keeps the sole-chunk mark of the family's first chunk true (see chunk-codec.ts): the first chunk
   * this update staged (`head`) is marked when no other chunk follows it; a stored first chunk marked
   * sole that now has others after it (a split that kept its record) is staged again unmarked. A stored
   * first chunk left alone that became the only one keeps no mark: that is allowed, only slower to load.
   */
  private markHead(batch: CommitBatch, dir: FamilyDirectory, plan: ChunkPlan, head: Buffer | undefined): void {
    if (dir.keys.length === 0) return;
    const sole = dir.keys.length === 1;
    if (head) {
      markSole(head, sole);
      return;
    }
    const old = plan.touched[0] === 0 ? plan.contents[0] : undefined;
    if (sole || !old || !isSoleChunk(old)) return;
    const unmarked = Buffer.from(old);
    markSole(unmarked, false);
    this.stageChunk(batch, dir.keys[0], unmarked);
  }

  /** Stages one chunk record (null: its removal) into `batch` and the overlay. */
  private stageChunk(batch: CommitBatch, key: Buffer, value: Buffer | null): void {
    const entry: OverlayEntry = { id: key.toString('latin1'), storageKey: key, sequence: 0, expiresAt: 0, value, batch };
    if (value === null) batch.del(key, entry.id);
    else batch.put(key, value, entry.id);
    this.ctx.overlay.set(entry);
    batch.entries.push(entry);
  }

  /**
   * Chunk `c` lost all its entries: drop it, except a first chunk with others after it (it anchors the
   * family's lowest keys); returns the empty first chunk staged, if so.
   */
  private writeEmptied(batch: CommitBatch, dir: FamilyDirectory, c: number, isNew: boolean): Buffer | undefined {
    if (isNew) return undefined;
    if (c === 0 && dir.keys.length > 1) {
      const anchor = encodeChunk([]);
      this.stageChunk(batch, dir.keys[0], anchor);
      return anchor;
    }
    this.stageChunk(batch, dir.keys[c], null);
    dir.remove(c);
    return undefined;
  }

  /**
   * Stages the rewritten chunks (highest index first, so splicing the directory keeps lower indices);
   * returns the first chunk's new record, if it staged one.
   */
  private writeChunks(batch: CommitBatch, dir: FamilyDirectory, touched: readonly number[], work: Map<number, ChunkWork>): Buffer | undefined {
    const lastChunk = dir.keys.length - 1;
    let head: Buffer | undefined;
    for (let t = touched.length - 1; t >= 0; t--) {
      const c = touched[t];
      const w = work.get(c)!;
      if (!w.changed && !emptiedFamily(dir, c, w.empty())) continue;
      const entries = w.sorted();
      const isNew = c >= dir.keys.length;
      const key = isNew ? dir.prefix : dir.keys[c];
      if (entries.length === 0) {
        head = this.writeEmptied(batch, dir, c, isNew) ?? head;
        continue;
      }
      const pieces = splitChunk(entries, c >= lastChunk && w.appendedOnly);
      if (!w.unchanged(pieces[0])) {
        const record = encodeChunk(pieces[0]);
        this.stageChunk(batch, key, record);
        if (c === 0) head = record;
      }
      if (isNew) dir.insert(dir.keys.length, key);
      for (let p = 1; p < pieces.length; p++) {
        const pieceKey = Buffer.concat([dir.prefix, pieces[p][0].key]);
        this.stageChunk(batch, pieceKey, encodeChunk(pieces[p]));
        dir.insert(c + p, pieceKey);
      }
    }
    this.directories.resize(dir.prefix.toString('latin1'), dir.bytes());
    return head;
  }

  /** {@link writeChunks} for the chunks of {@link applySorted}: each merge's items, encoded with `stamps`. */
  private writeMerged(batch: CommitBatch, dir: FamilyDirectory, touched: readonly number[], merges: readonly ChunkMerge[], stamps: Stamps): Buffer | undefined {
    const lastChunk = dir.keys.length - 1;
    let head: Buffer | undefined;
    for (let t = touched.length - 1; t >= 0; t--) {
      const merge = merges[t];
      const c = touched[t];
      if (!merge.changed && !emptiedFamily(dir, c, merge.items.length === 0)) continue;
      const isNew = c >= dir.keys.length;
      const key = isNew ? dir.prefix : dir.keys[c];
      if (merge.items.length === 0) {
        head = this.writeEmptied(batch, dir, c, isNew) ?? head;
        continue;
      }
      const starts = merge.pieces(c >= lastChunk && merge.appendedOnly);
      const firstEnd = starts.length > 1 ? starts[1] : merge.items.length;
      if (!merge.keepsRecord(firstEnd)) {
        const record = merge.encode(0, firstEnd, stamps);
        this.stageChunk(batch, key, record);
        if (c === 0) head = record;
      }
      if (isNew) dir.insert(dir.keys.length, key);
      for (let p = 1; p < starts.length; p++) {
        const pieceKey = Buffer.concat([dir.prefix, merge.keyOf(starts[p])]);
        this.stageChunk(batch, pieceKey, merge.encode(starts[p], p + 1 < starts.length ? starts[p + 1] : merge.items.length, stamps));
        dir.insert(c + p, pieceKey);
      }
    }
    this.directories.resize(dir.prefix.toString('latin1'), dir.bytes());
    return head;
  }
}
