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
 *
 * An update whose family's directory is not in memory starts reading the family's first chunk as it
 * arrives (directory-loader.ts), not when its turn to stage comes, so the updates of a segment that
 * create families do not each wait for the read of the one before; see {@link FamilyStore.stage}.
 */
import { ByteLru, type CacheStats } from '../byte-lru';
import { isSoleChunk } from './chunk-codec';
import type { KeyOrder } from './chunk-merge';
import { ChunkWork } from './chunk-work';
import { FamilyFilter } from './family-filter';
import { DirectoryLoader } from './directory-loader';
import { FamilyDirectory } from './family-directory';
import { ChunkPlan, FamilyStager, rangeBounds } from './family-stager';
import { ABSENT_BEYOND, ChunkLookups, entryAt, FoundEntry } from './chunk-lookup';
import { familyPrefix, NS_DATA } from '../key-codec';
import { userBounds } from '../key-range';
import type { OverlayEntry } from '../overlay';
import { DEFAULT_CHUNK_CACHE_BYTES, DEFAULT_DIRECTORY_CACHE_BYTES, SegmentState } from '../segments/segment-state';
import type { StageContext, StagedUpdate } from '../update-stager';
import { CheckedModification } from '../validation';

const DATA_FAMILY = 0x46; // 'F'

/**
 * What a cached chunk record holds beside its bytes: its Buffer object, the cache's slot, map entry and
 * key string, and the share of the allocation pool a small record keeps alive (measured with V8's heap
 * statistics: ~240 bytes of heap and ~40 of pool per one-entry record).
 */
const CHUNK_OVERHEAD_BYTES = 300;

/** The bytes a cached chunk record is charged to the chunk cache: about what it holds in memory. */
function chunkCharge(record: Buffer): number {
  return record.length + CHUNK_OVERHEAD_BYTES;
}

/** True for the storage key of a chunk record (a keyed family's data record). */
export function isChunkKey(key: Buffer): boolean {
  return key[0] === NS_DATA && key[9] === DATA_FAMILY;
}

/** The batch of a staged write that a reader must wait for (see OverlayEntry.batch). */
export type StagedBatch = NonNullable<OverlayEntry['batch']>;

export type { FoundEntry } from './chunk-lookup';

/** Records read as an update arrived, before its turn to stage, by chunk id (see FamilyStore.earlyRecord). */
type EarlyReads = Map<string, Buffer | undefined>;

/** Runs `run` once every update of the segment that arrived before it is staged (the engine's serializer). */
export type Serializer = <T>(run: () => T | Promise<T>) => T | Promise<T>;

/** Keyed-family storage of one engine. */
export class FamilyStore {
  private readonly directories: ByteLru<FamilyDirectory>;
  private readonly chunks: ByteLru<Buffer>;
  private readonly stager: FamilyStager;
  private readonly loader: DirectoryLoader;
  /** The families that may exist: a write into one that surely does not skips the read of its first chunk. */
  readonly filter = new FamilyFilter();

  constructor(
    private readonly ctx: StageContext,
    chunkCacheBytes = DEFAULT_CHUNK_CACHE_BYTES,
    directoryCacheBytes = DEFAULT_DIRECTORY_CACHE_BYTES,
  ) {
    this.directories = new ByteLru(directoryCacheBytes);
    this.chunks = new ByteLru(chunkCacheBytes);
    this.stager = new FamilyStager(ctx, this.directories);
    this.loader = new DirectoryLoader(ctx.db);
  }

  /**
   * A chunk record a read got from LevelDB, as LevelDB held it when the read located its chunk: read in
   * that same synchronous turn (a Get's first slice, point-reader.ts), or under an overlay read
   * registration made in that turn ({@link beginChunkRead}: an iterator page). Either way every write
   * of the chunk since is in the overlay, so the record is current unless the overlay holds one: then
   * it stays out, and the cache learns the write's record from {@link committed}. So a family read
   * often is answered from memory however large LevelDB grows, as a family written often already is.
   */
  cacheRead(id: string, record: Buffer): void {
    if (!this.ctx.overlay.get(id)) this.chunks.set(id, record, chunkCharge(record));
  }

  /**
   * Registers a read of chunk records about to start (call it in the turn its chunks are located and
   * its snapshot taken): until {@link endChunkRead}, a write applied meanwhile stays in the overlay, so
   * {@link cacheRead} keeps what the read got out of the cache when it is no longer current.
   */
  beginChunkRead(): number {
    return this.ctx.overlay.beginRead();
  }

  /** Ends a registration of {@link beginChunkRead}. */
  endChunkRead(token: number): void {
    this.ctx.overlay.endRead(token);
  }

  /** Chunk records of a durable batch: they become the cached contents. */
  committed(entries: readonly OverlayEntry[]): void {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (!isChunkKey(e.storageKey)) continue;
      if (e.value === null) this.chunks.delete(e.id);
      else this.chunks.set(e.id, e.value, chunkCharge(e.value));
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

  /** What the chunk cache and the directory cache hold and how their lookups went. */
  get cacheStats(): { chunk: CacheStats; directory: CacheStats } {
    return { chunk: this.chunks.stats, directory: this.directories.stats };
  }

  private cachedDirectory(seg: SegmentState, id: string, touch: boolean): FamilyDirectory | undefined {
    const d = touch ? this.directories.get(id) : this.directories.find(id);
    return d && d.seg === seg && d.valid ? d : undefined;
  }

  /**
   * The directory of a family none is cached for, from its first chunk `head` as LevelDB has it now,
   * when that is all the family (none, or marked sole): cached, with the chunk's record. With no
   * directory cached no write of the family waits for LevelDB (a directory stays pinned until then),
   * and updates stage one at a time, so LevelDB's state is the family's. Undefined for a family of
   * several chunks, which takes a seek (see {@link holdDirectory}).
   */
  private adopt(seg: SegmentState, prefix: Buffer, id: string, head: Buffer | undefined): FamilyDirectory | undefined {
    if (head !== undefined && !isSoleChunk(head)) return undefined;
    if (head !== undefined && !this.ctx.overlay.get(id)) this.chunks.set(id, head, chunkCharge(head));
    const dir = new FamilyDirectory(seg, prefix, head === undefined ? [] : [prefix], id, this.directories);
    this.directories.set(id, dir, dir.bytes());
    return dir;
  }

  /**
   * The family's directory, loaded from LevelDB if not cached, with its `users` count already raised
   * (the caller lowers it): raised in the same tick as the directory is found or cached, so that no
   * other update's eviction can drop it before the caller stages into it. A family of several chunks
   * is read with a seek; a small one (most) comes with its chunk records in the same read, which go to
   * the chunk cache: with the directory not cached no write of the family is in flight, and the caller
   * serializes staging, so they are current. The first chunk is taken from `early` when read there and
   * still current (see {@link earlyRecord}).
   */
  private async holdDirectory(seg: SegmentState, prefix: Buffer, id: string, early: EarlyReads | undefined): Promise<FamilyDirectory> {
    let dir = this.cachedDirectory(seg, id, true);
    if (!dir) {
      const read = this.earlyRecord(early, id);
      const head = read.found ? read.record : (this.knownHead(id) ?? this.loader.read(prefix));
      dir = this.adopt(seg, prefix, id, head);
      if (!dir) {
        const loaded = await this.loader.load(prefix, head);
        dir = this.cachedDirectory(seg, id, true);
        if (!dir) {
          for (const [key, record] of loaded.records) {
            const chunkId = key.toString('latin1');
            if (!this.ctx.overlay.get(chunkId)) this.chunks.set(chunkId, record, chunkCharge(record));
          }
          dir = new FamilyDirectory(seg, prefix, loaded.keys, id, this.directories);
          this.directories.set(id, dir, dir.bytes());
        }
      }
    }
    dir.addUser();
    return dir;
  }

  /**
   * The record of chunk `id` read early (as the update arrived, under its overlay read registration),
   * when it is still current in the update's turn: unless the overlay holds a write of that chunk.
   * Every write of the chunk after the read is still in the overlay then (pending, or applied and kept
   * for the registration), and one before it was in LevelDB when it was read. For a first chunk read
   * as the family's directory, the same holds of the whole family when the family was empty or of one
   * chunk: such a family changes only by a write of its first chunk (a split of a sole chunk rewrites
   * it unmarked). `found` false: not read early, or no longer current.
   */
  private earlyRecord(early: EarlyReads | undefined, id: string): { found: true; record: Buffer | undefined } | { found: false } {
    if (!early?.has(id) || this.ctx.overlay.get(id)) return { found: false };
    return { found: true, record: early.get(id) };
  }

  /**
   * The first chunk of a family whose directory is not cached, when memory has it (the overlay, or
   * the chunk cache: it outlives directories, which cost more per family); with no directory no write
   * of the family waits, so that is the current record. Undefined when only LevelDB knows.
   */
  private knownHead(id: string): Buffer | undefined {
    return this.known(id) ?? undefined;
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
   * they fall in are found comparing bytes (no key strings), each from the one before.
   */
  private planSorted(dir: FamilyDirectory, mods: readonly CheckedModification[]): ChunkPlan {
    const slots = new Array<number>(mods.length);
    const touched: number[] = [];
    const n = dir.keys.length;
    let removes = false;
    let c = n === 0 ? 0 : Math.max(0, dir.floorKey(mods[0].keySource, mods[0].keyStart, mods[0].keyEnd));
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      // The next key is mostly in the same chunk (one comparison); else it is found by bisection, not
      // by walking the chunks between (a batch may name keys at both ends of a family of hundreds).
      if (c + 1 < n && dir.startsAtOrBelow(c + 1, m.keySource, m.keyStart, m.keyEnd)) c = dir.floorKey(m.keySource, m.keyStart, m.keyEnd);
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
   * Checks and stages one update of a keyed family: synchronously when nothing of its segment waits
   * to be staged and its directory and chunks are in memory; else in turn (`serialize`), after
   * reading what is missing. `ids` are the keys' latin1 forms (undefined for range removals; none at
   * all for ascending keys, given as sent or, with `sorted`, sorted from another order). What is
   * missing is read at once, before the update's turn: the family's first chunk when its directory is
   * not in memory, else the chunks the update touches that are not (see {@link earlyRecord}), so that
   * the updates of a segment do not each wait in turn for a read.
   */
  stage(seg: SegmentState, mods: readonly CheckedModification[], ids: readonly (string | undefined)[] | undefined, serialize: Serializer, sorted?: KeyOrder): StagedUpdate | Promise<StagedUpdate> {
    const prefix = familyPrefix(seg.dataPrefix, mods[0].family);
    const id = prefix.toString('latin1');
    let dir = this.cachedDirectory(seg, id, true);
    let head: Buffer | undefined;
    if (!dir) {
      // A family that surely never had a write has no first chunk: no read of it (see family-filter.ts).
      const absent = this.filter.absent(id);
      head = this.knownHead(id) ?? (absent ? undefined : this.loader.read(prefix));
      dir = this.adopt(seg, prefix, id, head);
      // A member before anything of it is staged, so that no later write of it skips the read. (A
      // cached directory's family is one already: a write made it a member, or LevelDB held it.)
      this.filter.add(id);
    }
    let early: EarlyReads;
    if (dir) {
      const plan = ids ? this.plan(dir, mods, ids) : this.planSorted(dir, mods);
      if (!plan.contents.includes(undefined) && !seg.stagingTail) return ids ? this.stager.apply(seg, dir, mods, ids, plan) : this.stager.applySorted(seg, dir, mods, plan, sorted);
      early = new Map();
      for (let j = 0; j < plan.touched.length; j++) {
        if (plan.contents[j] !== undefined) continue;
        const key = dir.keys[plan.touched[j]];
        early.set(key.toString('latin1'), this.loader.read(key));
      }
    } else early = new Map([[id, head]]);
    // Registered in the same turn as the reads: a write they did not see stays in the overlay until this ends.
    const token = this.ctx.overlay.beginRead();
    const staged = serialize(() =>
      this.withDirectory(seg, prefix, id, early, async (held) => {
        const plan = ids ? this.plan(held, mods, ids) : this.planSorted(held, mods);
        await this.fill(held, plan, early);
        return ids ? this.stager.apply(seg, held, mods, ids, plan) : this.stager.applySorted(seg, held, mods, plan, sorted);
      }),
    ) as Promise<StagedUpdate>;
    const end = (): void => this.ctx.overlay.endRead(token);
    staged.then(end, end);
    return staged;
  }

  /**
   * Runs `work` with the family's directory (loaded if needed) held against eviction, under an
   * overlay read registration so that chunks committed while it reads are still seen in the overlay.
   */
  private async withDirectory<T>(seg: SegmentState, prefix: Buffer, id: string, early: EarlyReads | undefined, work: (dir: FamilyDirectory) => Promise<T>): Promise<T> {
    const token = this.ctx.overlay.beginRead();
    let dir: FamilyDirectory | undefined;
    try {
      dir = await this.holdDirectory(seg, prefix, id, early);
      return await work(dir);
    } finally {
      if (dir) dir.removeUser();
      this.ctx.overlay.endRead(token);
    }
  }

  /**
   * Reads the chunk records of `plan` not known in memory (the caller holds an overlay read
   * registration), taking those read `early` that are still current.
   */
  private async fill(dir: FamilyDirectory, plan: ChunkPlan, early?: EarlyReads): Promise<void> {
    const missing: number[] = [];
    for (let j = 0; j < plan.touched.length; j++) {
      if (plan.contents[j] !== undefined) continue;
      const read = this.earlyRecord(early, this.chunkId(dir, plan.touched[j]));
      if (read.found) plan.contents[j] = read.record ?? null;
      else missing.push(j);
    }
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
    return this.withDirectory(seg, prefix, prefix.toString('latin1'), undefined, async (dir) => {
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
   * write of the family waits for LevelDB (a directory stays pinned until then), so LevelDB has the
   * family as it is: its first chunk (`headOf`, under the family's prefix) answers when it is marked
   * sole or holds a key above this one, else LevelDB's floor of the key's storage key does.
   */
  locate(seg: SegmentState, family: string, key: Buffer, now: number, lookups: ChunkLookups): FamilyKeyLocation {
    const prefix = familyPrefix(seg.dataPrefix, family);
    const id = prefix.toString('latin1');
    const dir = this.cachedDirectory(seg, id, false);
    if (!dir) {
      const head = this.ctx.overlay.get(id)?.value ?? this.chunks.get(id);
      if (!head) return { headOf: prefix };
      const at = lookups.seek(head, key);
      if (at === ABSENT_BEYOND && !isSoleChunk(head)) return { headOf: prefix };
      return { found: { entry: at >= 0 ? entryAt(head, at, now) : undefined, staged: undefined } };
    }
    const c = dir.floor(key.toString('latin1'));
    // No chunk left: the writes that emptied the family are staged or applied (batches flush in
    // order, so the segment's newest batch being durable covers them).
    if (c < 0) return { found: { entry: undefined, staged: notDurable(seg.lastBatch) } };
    const chunk = this.chunkId(dir, c);
    const staged = this.ctx.overlay.get(chunk);
    if (staged) return { found: { entry: lookups.find(staged.value, key, now), staged: notDurable(staged.batch) } };
    const cached = this.chunks.get(chunk);
    if (cached) return { found: { entry: lookups.find(cached, key, now), staged: undefined } };
    return { chunkKey: dir.keys[c] };
  }
  /**
   * The chunks an iterator page of `family` walks, in walk order, located at this instant like
   * {@link locate}'s: from the chunk holding user key `start` (undefined: the first chunk, or the last
   * when `reverse`), at most `max` of them (`more`: chunks follow). Each comes with its record when
   * memory has it (staged, with the batch a reader waits for, or cached), else with its exact key for
   * LevelDB, which then holds its current record. Without the family's directory in memory, LevelDB
   * holds the whole family (as in {@link locate}): when the cache has its first chunk marked sole, that
   * is the page's one chunk; else `headOf`: its first chunk (under the prefix) tells whether it is all.
   */
  locatePage(seg: SegmentState, family: string, start: Buffer | undefined, reverse: boolean, max: number): PageChunks | { headOf: Buffer } {
    const prefix = familyPrefix(seg.dataPrefix, family);
    const id = prefix.toString('latin1');
    const dir = this.cachedDirectory(seg, id, false);
    if (!dir) {
      const head = this.ctx.overlay.get(id)?.value ?? this.chunks.get(id);
      if (head && isSoleChunk(head)) return { chunks: [{ key: prefix, record: head, staged: undefined, absent: false }], more: false, emptied: undefined };
      return { headOf: prefix };
    }
    const n = dir.keys.length;
    const step = reverse ? -1 : 1;
    let c = start === undefined ? (reverse ? n - 1 : 0) : dir.floor(start.toString('latin1'));
    // A forward walk from below the first chunk starts at it; a reverse one from there finds nothing.
    if (c < 0 && !reverse) c = 0;
    const chunks: PageChunk[] = [];
    for (; c >= 0 && c < n && chunks.length < max; c += step) {
      const key = dir.keys[c];
      const id = this.chunkId(dir, c);
      const staged = this.ctx.overlay.get(id);
      if (staged) chunks.push({ key, record: staged.value ?? undefined, staged: notDurable(staged.batch), absent: staged.value === null });
      else chunks.push({ key, record: this.chunks.get(id), staged: undefined, absent: false });
    }
    // No chunk left: the writes that emptied the family may not be durable yet (as in locate).
    const emptied = n === 0 ? notDurable(seg.lastBatch) : undefined;
    return { chunks, more: c >= 0 && c < n, emptied };
  }
}

/** One chunk of an iterator page (see {@link FamilyStore.locatePage}). */
export interface PageChunk {
  /** Its storage key: what LevelDB is asked for when `record` is undefined. */
  key: Buffer;
  /** Its record as memory has it, or undefined (read LevelDB, unless `absent`). */
  record: Buffer | undefined;
  /** The batch of its staged write that is not durable yet: the page waits for it. */
  staged: StagedBatch | undefined;
  /** Removed by a staged write (not expected in a directory, which drops a chunk as it is removed). */
  absent: boolean;
}

/** The chunks of one iterator page (see {@link FamilyStore.locatePage}). */
export interface PageChunks {
  chunks: PageChunk[];
  /** More chunks follow the last one in walk order. */
  more: boolean;
  /** For an empty family: the batch (not durable yet) of the writes that emptied it. */
  emptied: StagedBatch | undefined;
}

/** Where {@link FamilyStore.locate} found a key: answered from memory, or a LevelDB record to read. */
export type FamilyKeyLocation =
  | { found: { entry: FoundEntry | undefined; staged: StagedBatch | undefined }; chunkKey?: undefined; headOf?: undefined }
  | { chunkKey: Buffer; found?: undefined; headOf?: undefined }
  | { headOf: Buffer; found?: undefined; chunkKey?: undefined };

function notDurable(batch: StagedBatch | undefined): StagedBatch | undefined {
  return batch && !batch.durable ? batch : undefined;
}
