/**
 * Writes and point reads of keyed families, which are stored in chunks (see chunk-codec.ts).
 *
 * Writers keep a directory per family (family-directory.ts): the sorted storage keys of its chunks as
 * staged (not only as durable). This module finds the chunks an update touches and reads them;
 * family-stager.ts applies the update to them chunk by chunk. Directories and recently written chunk
 * records are cached in bounded LRUs; a directory with staged writes not yet durable is pinned, so a
 * directory that is not cached matches LevelDB exactly and can be loaded from it. Updates of one
 * segment are staged one after another (the engine serializes them), so a directory only changes
 * under the one update being staged.
 *
 * Chunk contents are looked up overlay first (staged), then the cache (durable), then LevelDB; a
 * LevelDB read runs under an overlay read registration so a chunk committed meanwhile is still seen
 * in the overlay. A failed flush invalidates every directory and the cache (see {@link invalidate}).
 */
import { ByteLru } from '../byte-lru';
import { ChunkEntry, decodeChunk, searchChunk } from './chunk-codec';
import { ChunkWork } from './chunk-work';
import { FamilyDirectory } from './family-directory';
import { ChunkPlan, FamilyStager, rangeBounds } from './family-stager';
import { familyPrefix, NS_DATA, prefixSuccessor } from '../key-codec';
import { userBounds } from '../key-range';
import type { OverlayEntry } from '../overlay';
import { DEFAULT_CHUNK_CACHE_BYTES, SegmentState } from '../segments/segment-state';
import type { StageContext, StagedUpdate } from '../update-stager';
import { CheckedModification } from '../validation';

const DATA_FAMILY = 0x46; // 'F'

/** A family of at most this many chunks is loaded with its records in one read. */
const SMALL_FAMILY_CHUNKS = 4;
/** Default bytes of family directories kept in memory. */
export const DEFAULT_DIRECTORY_CACHE_BYTES = 16 * 1024 * 1024;

/** True for the storage key of a chunk record (a keyed family's data record). */
export function isChunkKey(key: Buffer): boolean {
  return key[0] === NS_DATA && key[9] === DATA_FAMILY;
}

/** The batch of a staged write that a reader must wait for (see OverlayEntry.batch). */
export type StagedBatch = NonNullable<OverlayEntry['batch']>;

/** One stored entry found by a point read. */
export interface FoundEntry {
  value: Buffer;
  sequence: number;
}

function live(e: ChunkEntry | undefined, now: number): ChunkEntry | undefined {
  return e && (e.expiresAt === 0 || e.expiresAt > now) ? e : undefined;
}

/** Keyed-family storage of one engine. */
export class FamilyStore {
  private readonly directories: ByteLru<FamilyDirectory>;
  private readonly chunks: ByteLru<Buffer>;
  private readonly stager: FamilyStager;

  constructor(
    private readonly ctx: StageContext,
    chunkCacheBytes = DEFAULT_CHUNK_CACHE_BYTES,
    directoryCacheBytes = DEFAULT_DIRECTORY_CACHE_BYTES,
  ) {
    this.directories = new ByteLru(directoryCacheBytes, (d) => d.pending > 0 || d.users > 0);
    this.chunks = new ByteLru(chunkCacheBytes);
    this.stager = new FamilyStager(ctx, this.directories);
  }

  /** Chunk records of a durable batch: they become the cached contents. */
  committed(entries: readonly OverlayEntry[]): void {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (!isChunkKey(e.storageKey)) continue;
      if (e.value === null) this.chunks.delete(e.id);
      else this.chunks.set(e.id, e.value, e.value.length + 64);
    }
  }

  /** A flush failed: nothing staged on top of it can be trusted; forget every directory and chunk. */
  invalidate(): void {
    for (const d of this.directories.values()) d.valid = false;
    this.directories.clear();
    this.chunks.clear();
  }

  /** Forgets the cached state of a deleted segment. */
  dropSegment(seg: SegmentState): void {
    const prefix = seg.dataPrefix.toString('latin1');
    for (const d of this.directories.values()) if (d.seg === seg) d.valid = false;
    this.directories.deletePrefix(prefix);
    this.chunks.deletePrefix(prefix);
  }

  private cachedDirectory(seg: SegmentState, id: string, touch: boolean): FamilyDirectory | undefined {
    const d = touch ? this.directories.get(id) : this.directories.peek(id);
    return d && d.seg === seg && d.valid ? d : undefined;
  }

  /**
   * The family's directory, loaded from LevelDB if not cached, with its `users` count already raised
   * (the caller lowers it): raised in the same tick as the directory is found or cached, so that no
   * other update's eviction can drop it before the caller stages into it. A small family (most) comes
   * with its chunk records in the same read, which go to the chunk cache: with the directory not
   * cached no write of the family is in flight, and the caller serializes staging, so they are current.
   */
  private async holdDirectory(seg: SegmentState, prefix: Buffer, id: string): Promise<FamilyDirectory> {
    const cached = this.cachedDirectory(seg, id, true);
    if (cached) {
      cached.users++;
      return cached;
    }
    const range = { gte: prefix, lt: prefixSuccessor(prefix), keyEncoding: 'buffer' } as const;
    const small = await this.ctx.db.iterator({ ...range, valueEncoding: 'buffer', limit: SMALL_FAMILY_CHUNKS + 1 }).all();
    let keys: Buffer[];
    if (small.length <= SMALL_FAMILY_CHUNKS) {
      keys = small.map(([key]) => key);
      for (const [key, record] of small) {
        const chunkId = key.toString('latin1');
        if (!this.ctx.overlay.get(chunkId)) this.chunks.set(chunkId, record, record.length + 64);
      }
    } else {
      keys = await this.ctx.db.keys(range).all();
    }
    const again = this.cachedDirectory(seg, id, true);
    if (again) {
      again.users++;
      return again;
    }
    const dir = new FamilyDirectory(seg, prefix, keys);
    dir.users++;
    this.directories.set(id, dir, dir.bytes());
    return dir;
  }

  /** Staged, then cached content of a chunk record; undefined when only LevelDB knows it. */
  private known(id: string): Buffer | null | undefined {
    const staged = this.ctx.overlay.get(id);
    if (staged) return staged.value;
    return this.chunks.get(id);
  }

  private plan(dir: FamilyDirectory, mods: readonly CheckedModification[], ids: readonly (string | undefined)[]): ChunkPlan {
    const slots = new Array<number>(mods.length);
    const touched = new Set<number>();
    let removes = false;
    let slot = -1;
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      if (m.type === 'REMOVE_RANGE') {
        removes = true;
        slots[i] = -1;
        const { lower, upper } = userBounds(rangeBounds(m));
        const first = Math.max(0, lower ? dir.floor(lower.key.toString('latin1')) : 0);
        const last = upper ? dir.floor(upper.key.toString('latin1')) : dir.keys.length - 1;
        for (let c = first; c <= last; c++) touched.add(c);
        continue;
      }
      if (m.type === 'REMOVE') removes = true;
      const id = ids[i]!;
      // Batches usually name neighbouring keys: try the previous modification's chunk first.
      if (!dir.holds(slot, id)) slot = Math.max(0, dir.floor(id));
      slots[i] = slot;
      if (dir.keys.length > 0 || m.type === 'PUT' || m.type === 'INSERT') touched.add(slot);
    }
    // A family that may become empty must drop its first chunk too (not leave an empty record behind).
    if (removes && dir.keys.length > 0 && touched.size >= dir.keys.length - 1) touched.add(0);
    const list = [...touched].sort((a, b) => a - b);
    const contents = list.map((c) => (c < dir.keys.length ? this.known(this.chunkId(dir, c)) : null));
    return { slots, touched: list, contents };
  }

  /**
   * {@link plan} for modifications with strictly ascending keys and no range removal: the chunks
   * they fall in are found walking the directory once, comparing bytes (no key strings).
   */
  private planSorted(dir: FamilyDirectory, mods: readonly CheckedModification[]): ChunkPlan {
    const slots = new Array<number>(mods.length);
    const touched: number[] = [];
    const n = dir.keys.length;
    let removes = false;
    let c = n === 0 ? 0 : Math.max(0, dir.floorKey(mods[0].keySource, mods[0].keyStart, mods[0].keyEnd));
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      while (c + 1 < n && dir.startsAtOrBelow(c + 1, m.keySource, m.keyStart, m.keyEnd)) c++;
      slots[i] = c;
      if (m.type === 'REMOVE') removes = true;
      if ((n > 0 || m.type !== 'REMOVE') && touched[touched.length - 1] !== c) touched.push(c);
    }
    // As in plan(): a family that may become empty must drop its first chunk too.
    if (removes && n > 0 && touched.length >= n - 1 && touched[0] !== 0) touched.unshift(0);
    const contents = touched.map((t) => (t < n ? this.known(this.chunkId(dir, t)) : null));
    return { slots, touched, contents };
  }

  private chunkId(dir: FamilyDirectory, c: number): string {
    return dir.keys[c].toString('latin1');
  }

  /**
   * Checks and stages one update of a keyed family: synchronously when its directory and chunks are
   * in memory, else after reading them. `ids` are the keys' latin1 forms (undefined for range
   * removals). The caller serializes the updates of one segment.
   */
  stage(seg: SegmentState, mods: readonly CheckedModification[], ids?: readonly (string | undefined)[]): StagedUpdate | Promise<StagedUpdate> {
    const prefix = familyPrefix(seg.dataPrefix, mods[0].family);
    const id = prefix.toString('latin1');
    const dir = this.cachedDirectory(seg, id, true);
    if (dir) {
      const plan = ids ? this.plan(dir, mods, ids) : this.planSorted(dir, mods);
      if (!plan.contents.includes(undefined)) return ids ? this.stager.apply(seg, dir, mods, ids, plan) : this.stager.applySorted(seg, dir, mods, plan);
    }
    return this.readThenStage(seg, prefix, id, mods, ids);
  }

  private readThenStage(seg: SegmentState, prefix: Buffer, id: string, mods: readonly CheckedModification[], ids?: readonly (string | undefined)[]): Promise<StagedUpdate> {
    return this.withDirectory(seg, prefix, id, async (dir) => {
      const plan = ids ? this.plan(dir, mods, ids) : this.planSorted(dir, mods);
      await this.fill(dir, plan);
      return ids ? this.stager.apply(seg, dir, mods, ids, plan) : this.stager.applySorted(seg, dir, mods, plan);
    });
  }

  /**
   * Runs `work` with the family's directory (loaded if needed) held against eviction, under an
   * overlay read registration so that chunks committed while it reads are still seen in the overlay.
   */
  private async withDirectory<T>(seg: SegmentState, prefix: Buffer, id: string, work: (dir: FamilyDirectory) => Promise<T>): Promise<T> {
    const token = this.ctx.overlay.beginRead();
    let dir: FamilyDirectory | undefined;
    try {
      dir = await this.holdDirectory(seg, prefix, id);
      return await work(dir);
    } finally {
      if (dir) dir.users--;
      this.ctx.overlay.endRead(token);
    }
  }

  /** Reads the chunk records of `plan` not known in memory (the caller holds an overlay read registration). */
  private async fill(dir: FamilyDirectory, plan: ChunkPlan): Promise<void> {
    const missing: number[] = [];
    for (let j = 0; j < plan.touched.length; j++) if (plan.contents[j] === undefined) missing.push(j);
    if (missing.length === 0) return;
    const records = await this.ctx.db.getMany(missing.map((j) => dir.keys[plan.touched[j]]));
    for (let n = 0; n < missing.length; n++) {
      const j = missing[n];
      // Staged or committed while we read: the overlay holds the newer record.
      const known = this.known(this.chunkId(dir, plan.touched[j]));
      plan.contents[j] = known !== undefined ? known : (records[n] ?? null);
    }
  }

  /**
   * Stages the removal of entries of one family that still carry the expiry the index named and are
   * expired (the sweeper's part for keyed families). The caller serializes it with the segment's
   * updates; undefined when nothing was due.
   */
  async expire(seg: SegmentState, family: string, items: readonly { key: Buffer; expiresAt: number }[]): Promise<StagedUpdate | undefined> {
    const prefix = familyPrefix(seg.dataPrefix, family);
    return this.withDirectory(seg, prefix, prefix.toString('latin1'), async (dir) => {
      const asRemoval = (key: Buffer): CheckedModification => CheckedModification.removal(family, key);
      const itemIds = items.map((it) => it.key.toString('latin1'));
      const probe = this.plan(
        dir,
        items.map((it) => asRemoval(it.key)),
        itemIds,
      );
      await this.fill(dir, probe);
      const now = this.ctx.clock();
      const due: CheckedModification[] = [];
      const dueIds: string[] = [];
      const seen = new Set<string>();
      const chunks = new Map<number, ChunkWork>();
      for (let i = 0; i < items.length; i++) {
        const c = probe.slots[i];
        let w = chunks.get(c);
        // (clock 0: keep expired entries in view, their expiry is what is checked here)
        if (!w) chunks.set(c, (w = new ChunkWork(probe.contents[probe.touched.indexOf(c)] ?? null, 0)));
        const e = w.get(itemIds[i]);
        if (!e || seen.has(itemIds[i])) continue;
        if (e.expiresAt === items[i].expiresAt && e.expiresAt <= now) {
          seen.add(itemIds[i]);
          due.push(asRemoval(items[i].key));
          dueIds.push(itemIds[i]);
        }
      }
      if (due.length === 0 || seg.deleted) return undefined;
      const plan = this.plan(dir, due, dueIds);
      await this.fill(dir, plan);
      return this.stager.apply(seg, dir, due, dueIds, plan);
    });
  }

  /**
   * Where a point read of one key of a keyed family finds it, decided synchronously (so that every
   * key of one Get is located at the same instant; see point-reader.ts). With the family's directory
   * in memory the key's chunk is the directory's (as staged): its record is in the overlay (`staged`,
   * when set, is the batch the caller waits for before answering: that write is not durable yet), in
   * the cache, or in LevelDB under its exact key (`chunkKey`), never LevelDB's floor, which may still
   * hold a chunk the overlay has removed or lack one it has added. Without the directory in memory no
   * write of the family waits for LevelDB (a directory stays pinned until then), so the chunk is
   * LevelDB's floor of the key (`floorOf`: the family's prefix and the key's storage key).
   */
  locate(seg: SegmentState, family: string, key: Buffer, now: number): FamilyKeyLocation {
    const prefix = familyPrefix(seg.dataPrefix, family);
    const dir = this.cachedDirectory(seg, prefix.toString('latin1'), false);
    if (!dir) return { floorOf: { prefix, storageKey: Buffer.concat([prefix, key]) } };
    const c = dir.floor(key.toString('latin1'));
    // No chunk left: the writes that emptied the family are staged or applied (batches flush in
    // order, so the segment's newest batch being durable covers them).
    if (c < 0) return { found: { entry: undefined, staged: notDurable(seg.lastBatch) } };
    const id = this.chunkId(dir, c);
    const staged = this.ctx.overlay.get(id);
    if (staged) return { found: { entry: findIn(staged.value, key, now), staged: notDurable(staged.batch) } };
    const cached = this.chunks.peek(id);
    if (cached) return { found: { entry: findIn(cached, key, now), staged: undefined } };
    return { chunkKey: dir.keys[c] };
  }
}

/** Where {@link FamilyStore.locate} found a key: answered from memory, or a LevelDB record to read. */
export type FamilyKeyLocation =
  | { found: { entry: FoundEntry | undefined; staged: StagedBatch | undefined }; chunkKey?: undefined; floorOf?: undefined }
  | { chunkKey: Buffer; found?: undefined; floorOf?: undefined }
  | { floorOf: { prefix: Buffer; storageKey: Buffer }; found?: undefined; chunkKey?: undefined };

function notDurable(batch: StagedBatch | undefined): StagedBatch | undefined {
  return batch && !batch.durable ? batch : undefined;
}

/** The live entry of `key` in chunk record `record` (null: no record), if any. */
export function findIn(record: Buffer | null, key: Buffer, now: number): FoundEntry | undefined {
  if (!record) return undefined;
  const entries = decodeChunk(record);
  const at = searchChunk(entries, key);
  const e = at >= 0 ? live(entries[at], now) : undefined;
  return e ? { value: e.value, sequence: e.sequence } : undefined;
}
