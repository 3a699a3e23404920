/**
 * What a storage backend gives the block archive (block-archive.ts): a page's metadata read and
 * written by compare-and-set together with index entries and records, sealed blocks written once,
 * and the reads a lookup needs. The kvt table (kvt-archive-backend.ts) and Cassandra
 * (cassandra-archive-backend.ts) implement it; the archive's rules (when a block seals, what an
 * image holds, dedupe, caching, checks) live once, in the archive.
 */
import type { EncodedRecord } from './record-codec';

/**
 * A page's metadata: where its open block stands and what it keeps. Written only by a
 * compare-and-set that also writes the entries the change describes, so it always matches them.
 */
export interface PageState {
  /** The block new renders go to; every block below it is sealed. */
  openBlock: number;
  /** Renders in the open block (in its image or pending). */
  openRevisions: number;
  /** Their raw bytes. */
  openRawBytes: number;
  /** The open block has reached its count or size: it must be sealed before anything else is appended. */
  full: boolean;
  /** Renders of the open block held by its compressed image (the rest are pending). */
  imageRevisions: number;
  /** Stored bytes of the image. */
  imageBytes: number;
  /** Stored bytes of the pending records. */
  pendingBytes: number;
  /** Renders archived for the page. */
  revisions: number;
  /** Their raw bytes. */
  rawBytes: number;
  sealedBlocks: number;
  /** Stored bytes of the sealed blocks. */
  sealedBytes: number;
  /** Stored bytes of the index entries. */
  indexBytes: number;
}

/** The state of a page never written. */
export function emptyPageState(): PageState {
  return { openBlock: 0, openRevisions: 0, openRawBytes: 0, full: false, imageRevisions: 0, imageBytes: 0, pendingBytes: 0, revisions: 0, rawBytes: 0, sealedBlocks: 0, sealedBytes: 0, indexBytes: 0 };
}

/** A page's state as read, with the backend's token for the compare-and-set (its version; null for a page never written). */
export interface PageSnapshot {
  state: PageState;
  token: string | null;
}

/** A render to append: its record, and the record as stored pending (block-codec's encodePending). */
export interface AppendEntry {
  record: EncodedRecord;
  pending: Buffer;
}

/**
 * A render's place, as the index has it; `sealed` when the backend learnt it in the same read, and
 * `pending` (the stored pending record) when the backend keeps it beside the index entry.
 */
export interface IndexHit {
  rev: number;
  tid: string;
  block: number;
  sealed?: boolean;
  pending?: Buffer;
}

/** What holds a render: its sealed block, its pending record, or the image of its open block (each whole, as stored). */
export type StoredContent = { kind: 'sealed' | 'pending' | 'image'; stored: Buffer };

/** An open block's content as stored: its image (if any) and its pending records. */
export interface OpenContent {
  image: Buffer | null;
  pending: Buffer[];
}

/** Stored sizes, as the backend writes them (keys and values). */
export interface BackendSizes {
  /** One index entry pointing at `block`. */
  indexEntry(block: number): number;
  /** One pending record of `stored` bytes. */
  pendingEntry(stored: number): number;
  /** A block or image of `stored` bytes, chunks and keys included. */
  block(stored: number): number;
  /** The page's metadata and directory entries. */
  page(title: string, state: PageState): number;
}

/** A storage backend of the block archive. Every method may throw the backend's own errors (UnavailableError, …). */
export interface ArchiveBackend {
  readonly sizes: BackendSizes;
  /** The page's state and token (an empty state when the page has none). */
  readState(title: string): Promise<PageSnapshot>;
  /** Which of these (rev, tid) the index holds, as revisionId strings. */
  existing(title: string, records: readonly EncodedRecord[]): Promise<Set<string>>;
  /** Writes index entries and pending records into `block` with `next`, if the state is still `snap`'s; false when it is not. */
  commitAppend(title: string, snap: PageSnapshot, next: PageState, block: number, entries: readonly AppendEntry[]): Promise<boolean>;
  /** The image and pending records of an open block. */
  readOpen(title: string, block: number): Promise<OpenContent>;
  /** Replaces the open block's image and drops its pending records, if the state is still `snap`'s. */
  commitImage(title: string, snap: PageSnapshot, next: PageState, block: number, image: Buffer): Promise<boolean>;
  /** Writes the sealed block once and drops the image and pending records, if the state is still `snap`'s. */
  commitSeal(title: string, snap: PageSnapshot, next: PageState, block: number, sealed: Buffer): Promise<boolean>;
  /** The index entry of (rev, tid), or with no tid the highest tid of rev; null when none. */
  lookup(title: string, rev: number, tid?: string): Promise<IndexHit | null>;
  /** What holds the render now; null when none does (it moved between the lookup and this read). */
  readContent(title: string, hit: IndexHit): Promise<StoredContent | null>;
  /** Every page with its state. */
  pages(): AsyncIterable<{ title: string; state: PageState }>;
  close(): Promise<void>;
}
