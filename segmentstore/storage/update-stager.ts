/**
 * Staging one atomic Update: condition checks against the state before the batch (overlay first,
 * then LevelDB), then every modification applied in order into the current group-commit batch.
 * Check and stage run synchronously one after the other, so no other update can slip in between.
 */
import type { ClassicLevel } from 'classic-level';
import { ErrorCodes } from '../../proto/error-codes';
import { KvtFault } from '../../server-kit/fault';
import { copyRange } from './chunks/chunk-codec';
import type { CommitBatch } from './log/commit-batch';
import type { GroupCommitter } from './log/group-commit';
import { expiryKey, familyPrefix, userKeyOf, VALUE_HEADER_BYTES, valueExpiresAt, valueSequence, writeValueHeader } from './key-codec';
import { inBounds, KeyBounds, storageRange } from './key-range';
import { Overlay, OverlayEntry } from './overlay';
import { SegmentState } from './segments/segment-state';
import type { CheckedModification } from './validation';

const EMPTY = Buffer.alloc(0);

/** What staging needs from the engine. */
export interface StageContext {
  readonly db: ClassicLevel<Buffer, Buffer>;
  readonly overlay: Overlay;
  readonly committer: GroupCommitter;
  readonly clock: () => number;
}

/**
 * A staged update: durable once `batch.done` resolves. Its PUTs and INSERTs got consecutive sequences
 * in modification order, from `firstSequence` (0 when it has none).
 */
export interface StagedUpdate {
  batch: CommitBatch;
  firstSequence: number;
  mods: readonly CheckedModification[];
}

/**
 * What an update was given, once durable: the sequence of its first PUT or INSERT (the next ones
 * follow in modification order, as UpdateResponse.first_sequence says). `sequences` spells out one
 * per modification ("" for removes) for callers that want them; the wire answer is the one number.
 */
export class UpdateOutcome {
  constructor(
    /** 0 when the update put and inserted nothing. */
    readonly firstSequence: number,
    private readonly mods: readonly Pick<CheckedModification, 'type'>[],
  ) {}

  /** One decimal sequence per modification, in order; "" for REMOVE and REMOVE_RANGE. */
  get sequences(): string[] {
    let next = this.firstSequence;
    return this.mods.map((m) => (m.type === 'REMOVE' || m.type === 'REMOVE_RANGE' ? '' : String(next++)));
  }
}

/** LevelDB state read before staging: stored values of checked keys, keys of removed ranges. */
interface ReadState {
  values: (Buffer | undefined)[];
  ranges: Buffer[][];
}

/** True when staging must first read LevelDB (conditions, inserts, range removals). */
export function needsRead(mods: readonly CheckedModification[]): boolean {
  for (let i = 0; i < mods.length; i++) {
    const m = mods[i];
    if (m.condition !== 'NONE' || m.type === 'INSERT' || m.type === 'REMOVE_RANGE') return true;
  }
  return false;
}

function rangeBounds(m: CheckedModification): KeyBounds {
  return { prefix: m.rangePrefix, from: m.rangeFrom, to: m.rangeTo, toInclusive: false, reverse: false };
}

/**
 * Storage keys of the modifications, their latin1 ids (undefined for range removals) and, for PUT and
 * INSERT, the stored values with the value bytes in place and the header left for staging to fill.
 */
export interface UpdateKeys {
  keys: (Buffer | undefined)[];
  ids: (string | undefined)[];
  values: (Buffer | undefined)[];
}

function slabBytes(prefixLength: number, mods: readonly CheckedModification[]): number {
  let total = 0;
  for (let i = 0; i < mods.length; i++) {
    const m = mods[i];
    if (m.type === 'REMOVE_RANGE') continue;
    total += prefixLength + m.keyLength;
    if (m.type === 'PUT' || m.type === 'INSERT') total += VALUE_HEADER_BYTES + m.valueLength;
  }
  return total;
}

/**
 * Storage keys and values of every modification; all share one family, so its prefix is encoded
 * once. Why one slab: allocating two buffers per modification cost more than copying the bytes.
 */
export function storageKeys(seg: SegmentState, mods: readonly CheckedModification[]): UpdateKeys {
  const keys = new Array<Buffer | undefined>(mods.length);
  const ids = new Array<string | undefined>(mods.length);
  const values = new Array<Buffer | undefined>(mods.length);
  const prefix = mods.length > 0 ? familyPrefix(seg.dataPrefix, mods[0].family) : EMPTY;
  const slab = Buffer.allocUnsafe(slabBytes(prefix.length, mods));
  let at = 0;
  for (let i = 0; i < mods.length; i++) {
    const m = mods[i];
    if (m.type === 'REMOVE_RANGE') continue;
    slab.set(prefix, at);
    const keyEnd = copyRange(slab, at + prefix.length, m.keySource, m.keyStart, m.keyEnd);
    const key = slab.subarray(at, keyEnd);
    keys[i] = key;
    ids[i] = slab.toString('latin1', at, keyEnd);
    at = keyEnd;
    if (m.type !== 'PUT' && m.type !== 'INSERT') continue;
    const valueEnd = copyRange(slab, at + VALUE_HEADER_BYTES, m.valueSource, m.valueStart, m.valueEnd);
    values[i] = slab.subarray(at, valueEnd);
    at = valueEnd;
  }
  return { keys, ids, values };
}

/** Reads what the checks need; the caller holds an overlay read registration around this and staging. */
export async function readForUpdate(ctx: StageContext, seg: SegmentState, mods: readonly CheckedModification[], { keys }: UpdateKeys): Promise<ReadState> {
  const values: (Buffer | undefined)[] = [];
  const ranges: Buffer[][] = [];
  for (let i = 0; i < mods.length; i++) {
    const m = mods[i];
    if (m.type === 'REMOVE_RANGE') {
      const range = storageRange(familyPrefix(seg.dataPrefix, m.family), rangeBounds(m));
      ranges[i] = range ? await ctx.db.keys({ ...range, keyEncoding: 'buffer' }).all() : [];
    } else if (m.condition !== 'NONE' || m.type === 'INSERT') {
      // Read synchronously, as point gets are (read/snapshot-view.ts): a record in LevelDB's block cache
      // or the page cache costs a few microseconds, a getMany's trip through LevelDB's thread pool more
      // CPU and a wait for the pool and the event loop.
      values[i] = ctx.db.getSync(keys[i]!);
    }
  }
  return { values, ranges };
}

/** The live version sequence of a key right now, or undefined when absent or expired. */
function currentSequence(ctx: StageContext, id: string, stored: Buffer | undefined, now: number): number | undefined {
  const pending = ctx.overlay.get(id);
  if (pending) {
    if (pending.value === null || (pending.expiresAt !== 0 && pending.expiresAt <= now)) return undefined;
    return pending.sequence;
  }
  if (!stored) return undefined;
  const expiresAt = valueExpiresAt(stored);
  if (expiresAt !== 0 && expiresAt <= now) return undefined;
  return valueSequence(stored);
}

/**
 * Checks the conditions of an update's modifications given each key's live sequence right now
 * (undefined when absent); throws on the first failing one, with its index.
 * @throws KvtFault BAD_KEY_VERSION / NO_SUCH_KEY
 */
export function checkConditions(seg: SegmentState, mods: readonly CheckedModification[], currentOf: (i: number) => number | undefined): void {
  for (let i = 0; i < mods.length; i++) {
    const m = mods[i];
    if (m.condition !== 'NONE' || m.type === 'INSERT') checkCondition(seg, m, i, currentOf(i));
  }
}

/**
 * Checks the condition of modification `i` given its key's live sequence right now (undefined when
 * absent); an unconditional PUT or REMOVE always passes.
 * @throws KvtFault BAD_KEY_VERSION / NO_SUCH_KEY
 */
export function checkCondition(seg: SegmentState, m: CheckedModification, i: number, current: number | undefined): void {
  if (m.condition === 'NONE' && m.type !== 'INSERT') return;
  if (m.type === 'INSERT' || m.condition === 'NOT_EXISTS') {
    if (current !== undefined) {
      throw new KvtFault(ErrorCodes.BAD_KEY_VERSION, `modifications[${i}]: the key already exists in segment ${seg.id}`, i);
    }
    return;
  }
  if (current === undefined) {
    throw new KvtFault(ErrorCodes.NO_SUCH_KEY, `modifications[${i}]: the key does not exist in segment ${seg.id}`, i);
  }
  if (m.conditionSegmentId !== seg.id || m.conditionSequence !== current) {
    // Versions as the client writes them (Version.toString: "<segment>.<sequence>"), so a caller can pass the current one back.
    const wanted = `${m.conditionSegmentId}.${m.conditionSequence < 0 ? 'beyond 2^53' : m.conditionSequence}`;
    throw new KvtFault(ErrorCodes.BAD_KEY_VERSION, `modifications[${i}]: the key's version is ${seg.id}.${current}, not ${wanted}`, i);
  }
}

function stageEntry(batch: CommitBatch, ctx: StageContext, id: string, storageKey: Buffer, sequence: number, expiresAt: number, value: Buffer | null): void {
  const entry: OverlayEntry = { id, storageKey, sequence, expiresAt, value, batch };
  ctx.overlay.set(entry);
  batch.entries.push(entry);
}

function stageRangeRemoval(ctx: StageContext, batch: CommitBatch, seg: SegmentState, m: CheckedModification, dbKeys: readonly Buffer[]): void {
  const bounds = rangeBounds(m);
  const prefix = familyPrefix(seg.dataPrefix, m.family);
  const doomed = new Map<string, Buffer>();
  for (const key of dbKeys) doomed.set(key.toString('latin1'), key);
  for (const e of ctx.overlay.withPrefix(prefix.toString('latin1'))) {
    if (inBounds(userKeyOf(e.storageKey), bounds)) doomed.set(e.id, e.storageKey);
  }
  for (const [id, key] of doomed) {
    const pending = ctx.overlay.get(id);
    if (pending && pending.value === null) continue;
    batch.del(key, id);
    stageEntry(batch, ctx, id, key, 0, 0, null);
  }
}

/** Makes sure the segment's sequence record is written with `batch` (once per batch). */
export function ensureSequenceRecord(batch: CommitBatch, seg: SegmentState): void {
  if (seg.lastBatch === batch) return;
  seg.lastBatch = batch;
  batch.beforeWrite.push((b) => {
    const value = Buffer.allocUnsafe(8);
    value.writeBigUInt64BE(BigInt(seg.lastSequence), 0);
    b.put(seg.sequenceKey, value);
  });
}

/**
 * Checks conditions and stages every modification into the current batch, synchronously.
 * @throws KvtFault BAD_KEY_VERSION / NO_SUCH_KEY with the index of the failing modification.
 */
export function stageUpdate(ctx: StageContext, seg: SegmentState, mods: readonly CheckedModification[], { keys, ids, values }: UpdateKeys, read?: ReadState): StagedUpdate {
  if (seg.deleted) throw new KvtFault(ErrorCodes.SEGMENT_NOT_FOUND, `segment ${seg.id} does not exist on this store`);
  const now = ctx.clock();
  if (read || needsRead(mods)) checkConditions(seg, mods, (i) => currentSequence(ctx, ids[i]!, read?.values[i], now));
  const batch = ctx.committer.batch();
  ensureSequenceRecord(batch, seg);
  let firstSequence = 0;
  for (let i = 0; i < mods.length; i++) {
    const m = mods[i];
    if (m.type === 'REMOVE_RANGE') {
      stageRangeRemoval(ctx, batch, seg, m, read?.ranges[i] ?? []);
      continue;
    }
    const key = keys[i]!;
    if (m.type === 'REMOVE') {
      batch.del(key, ids[i]);
      stageEntry(batch, ctx, ids[i]!, key, 0, 0, null);
      continue;
    }
    const sequence = ++seg.lastSequence;
    firstSequence ||= sequence;
    const expiresAt = m.ttlMs > 0 ? now + m.ttlMs : 0;
    const stored = values[i]!;
    writeValueHeader(stored, 0, sequence, expiresAt);
    batch.put(key, stored, ids[i]);
    if (expiresAt !== 0) batch.put(expiryKey(expiresAt, key), EMPTY);
    stageEntry(batch, ctx, ids[i]!, key, sequence, expiresAt, m.value);
  }
  ctx.committer.staged();
  return { batch, firstSequence, mods };
}
