/** In-memory state of one hosted table segment, and the engine's options. */
import type { CommitBatch } from '../log/commit-batch';
import type { StorageObserver } from '../storage-observer';
import { encodeSegmentId, segmentDataPrefix, segmentRecordKey, segmentSequenceKey } from '../key-codec';
import { FAMILY_FILTER_BYTES } from '../chunks/family-filter';

/** The persisted segment record (JSON under the record key). */
export interface SegmentRecord {
  table: string;
  state: 'active' | 'deleting';
  createdAtMs: number;
}

/** A hosted segment. Its `lastSequence` is handed out in memory and persisted with every flush. */
export class SegmentState {
  readonly id8: Buffer;
  readonly dataPrefix: Buffer;
  readonly recordKey: Buffer;
  readonly sequenceKey: Buffer;
  /** Set once the segment is being deleted: nothing more may be staged for it. */
  deleted = false;
  /** The batch holding this segment's newest staged writes (reads of ranges wait for it). */
  lastBatch: CommitBatch | undefined;
  /** Settles once every update of this segment that is waiting to be staged has been (arrival order). */
  stagingTail: Promise<void> | undefined;

  constructor(
    readonly id: string,
    public record: SegmentRecord,
    public lastSequence: number,
  ) {
    this.id8 = encodeSegmentId(id);
    this.dataPrefix = segmentDataPrefix(this.id8);
    this.recordKey = segmentRecordKey(this.id8);
    this.sequenceKey = segmentSequenceKey(this.id8);
  }
}

/** Default bytes of recently written or read family chunks kept in memory; the store's `--chunk-cache-mb` defaults to it. */
export const DEFAULT_CHUNK_CACHE_BYTES = 64 * 1024 * 1024;

/** Default bytes of family directories kept in memory; the store's `--directory-cache-mb` defaults to it. */
export const DEFAULT_DIRECTORY_CACHE_BYTES = 16 * 1024 * 1024;

/** Default LevelDB memtable size (see SegmentEngineOptions.writeBufferBytes for why 64 MiB); the store's `--write-buffer-mb` defaults to it. */
export const DEFAULT_WRITE_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Default largest size of the durable log file (it starts at 4 MiB and grows only as far as the writes
 * not yet applied need); the store's `--log-mb` defaults to it.
 */
export const DEFAULT_LOG_BYTES = 256 * 1024 * 1024;

/** Default longest time a durable write waits before it is applied to LevelDB; the store's `--log-apply-ms` defaults to it. */
export const DEFAULT_LOG_APPLY_MS = 1000;

/** LevelDB's block cache: classic-level's default, which kvt keeps. */
export const LEVELDB_BLOCK_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * LevelDB's open table files keep their index and bloom filter blocks in memory: a few per cent of
 * the data, for at most ~1,000 tables of 2 MiB (classic-level's `maxOpenFiles` and `maxFileSize`).
 * Measured: +30–40 MiB per store as its data grew from 0.2 to 1.2 GB (2,000,000 families).
 */
export const LEVELDB_OPEN_TABLES_BYTES = 64 * 1024 * 1024;

/**
 * What a segment store holds at rest beyond its caches and LevelDB's buffers, at most, measured with
 * default settings (README, Storage, "Memory"): Node, V8 and gRPC themselves, the V8 heap's headroom
 * above what the caches keep alive (V8 collects its old generation only as it nears a limit set from
 * the live heap), Buffers that became garbage since the last collection, and the memory the allocator
 * keeps after they are freed.
 */
export const RESTING_OVERHEAD_BYTES = 256 * 1024 * 1024;

/**
 * The anonymous memory (RSS less mapped files) a segment store holds at rest, at most: its chunk and
 * directory caches, LevelDB's memtable twice (the one filling and the one being written out), its
 * block cache and its open tables' indexes and filters, the family filter (chunks/family-filter.ts) and {@link RESTING_OVERHEAD_BYTES}. Mapped files come beside it: LevelDB reads its
 * table files through mmap, so RSS also counts the pages of them that reads touched (the kernel's page
 * cache, given back under memory pressure).
 */
export function restingMemoryBound(o: { chunkCacheBytes?: number; directoryCacheBytes?: number; writeBufferBytes?: number } = {}): number {
  const chunks = o.chunkCacheBytes ?? DEFAULT_CHUNK_CACHE_BYTES;
  const directories = o.directoryCacheBytes ?? DEFAULT_DIRECTORY_CACHE_BYTES;
  const memtables = 2 * (o.writeBufferBytes ?? DEFAULT_WRITE_BUFFER_BYTES);
  return chunks + directories + memtables + LEVELDB_BLOCK_CACHE_BYTES + LEVELDB_OPEN_TABLES_BYTES + FAMILY_FILTER_BYTES + RESTING_OVERHEAD_BYTES;
}

/** Options of {@link SegmentEngine.open}. */
export interface SegmentEngineOptions {
  /** The wall clock (ms since the epoch) that the store's expiry clock follows, never going back (store-clock.ts). @default Date.now */
  clock?: () => number;
  /** How often the background sweeper removes expired entries; 0 = never. @default 1000 */
  expirySweepIntervalMs?: number;
  /** Expired entries removed per sweeper batch (bounded so it never stalls writers). @default 1000 */
  expirySweepBatchSize?: number;
  /** A group-commit batch holding this many operations takes no further updates. @default 128 */
  maxFlushOps?: number;
  /** Longest one Execute's updates may hold back a flush while they stage. @default 10 */
  maxHoldMs?: number;
  /** Bytes of recently written or read family chunks kept in memory (writes and reads of them need no LevelDB read). @default 64 MiB */
  chunkCacheBytes?: number;
  /** Bytes of family directories (each family's chunk keys) kept in memory. @default 16 MiB */
  directoryCacheBytes?: number;
  /**
   * Bytes LevelDB buffers in its memtable before writing a table file. @default 64 MiB
   * Why larger than LevelDB's 4 MiB: a flush writes every version in the memtable, and each four
   * flushes are compacted into level 1; with overwrites (a busy family is rewritten chunk by chunk),
   * a bigger memtable means fewer compactions that each rewrite the same live data.
   */
  writeBufferBytes?: number;
  /**
   * Largest size of the durable log (durable-log.ts); 0 = no log, every flush is a LevelDB batch
   * written with `sync: true`. A quarter of it held by writes not yet applied starts an apply.
   * @default 256 MiB
   */
  logBytes?: number;
  /**
   * Longest time a durable write waits before it is applied to LevelDB. Why not at once: a busy key
   * (a family's chunk rewritten by every batch) is then written to LevelDB once per apply, not once
   * per flush, so LevelDB's memtable, table files and compactions carry a fraction of the versions.
   * Readers never wait for it: point reads and checks see the writes in memory, and an iterator or
   * scan applies what it needs first. @default 1000
   */
  logApplyMs?: number;
  /**
   * Called once when a storage write fails (the log's or LevelDB's). The engine then refuses every call (UNAVAILABLE) until it
   * is closed and opened again, which lets LevelDB recover its log (see group-commit.ts for why).
   */
  onStorageFailure?: (err: unknown) => void;
  /** Called when a background task fails (the engine itself logs nothing). */
  onBackgroundError?: (err: unknown, task: string) => void;
  /**
   * Told of every group-commit flush, durable-log write and apply (the segment store's metrics);
   * a few calls per flush, none per update. @default none
   */
  observer?: StorageObserver;
}

/** The engine's lifecycle. */
/** `failed`: a storage write failed; the engine takes no more calls (close it and reopen to recover). */
export type EngineState = 'opening' | 'open' | 'failed' | 'closing' | 'closed';
