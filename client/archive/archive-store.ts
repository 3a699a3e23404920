/**
 * The archive tier's contract (DESIGN §4, §7; source document 003): whole page histories kept in
 * compressed blocks of many consecutive revisions, plus a small index (page, rev, tid) → block.
 * Two stores implement it, {@link KvtArchiveStore} on a kvt table and {@link CassandraArchiveStore}
 * on Apache Cassandra; one conformance suite (test/suites/archive-*.ts) runs against both.
 */

/** A body: UTF-8 text (such as HTML) or bytes. */
export type ArchivedBody = string | Uint8Array;

/**
 * One render of one revision of a page, as the archive keeps it: the shape of PageRevisionStore's
 * renders (`{ title, rev, tid, value, headers, parts }`), so a render read from the hot table can
 * be appended as it is.
 *
 * Each body (`value`, and each of `parts`) is a string or bytes; the archive keeps which one it was,
 * so a string reads back as the same string and bytes as a `Uint8Array` with the same bytes.
 */
export interface ArchivedRender {
  /** The page (title, domain-qualified if the app wants): 1 to 2,048 bytes of UTF-8, no U+0000. */
  title: string;
  /** The revision: a non-negative safe integer. */
  rev: number;
  /** The render's time-based (version 1) UUID, `xxxxxxxx-xxxx-1xxx-yxxx-xxxxxxxxxxxx`; read back in lower case. */
  tid: string;
  /** The main body. */
  value: ArchivedBody;
  /** Response headers kept with the body (string values); absent on append reads back as `{}`. */
  headers?: Record<string, string>;
  /** Named extra bodies (such as `data-parsoid`); absent on append reads back as `{}`. */
  parts?: Record<string, ArchivedBody>;
}

/** A render as {@link ArchiveStore.get} returns it: `headers` and `parts` are always present. */
export type ArchivedRenderRead = ArchivedRender & { headers: Record<string, string>; parts: Record<string, ArchivedBody> };

/** What {@link ArchiveStore.append} did. */
export interface ArchiveAppendResult {
  /** Renders newly archived by this call. */
  appended: number;
  /** Renders whose (title, rev, tid) was already archived: left as they were, never replaced. */
  alreadyArchived: number;
}

/** Where a render lives in the archive ({@link ArchiveStore.locate}). */
export interface ArchiveLocation {
  title: string;
  rev: number;
  tid: string;
  /** The block number within the page (0, 1, 2, … in the order blocks were opened). */
  block: number;
  /** True once the block is sealed: compressed for good, never rewritten. */
  sealed: boolean;
}

/** Sizes and counts of an archive, or of one page of it. */
export interface ArchiveStats {
  /** Pages with at least one archived render. */
  pages: number;
  /** Archived renders. */
  revisions: number;
  /** Their raw size: the bytes of the bodies (UTF-8 for strings), of the part names and of the headers as JSON. */
  rawBytes: number;
  /**
   * Everything the archive keeps for them: sealed blocks, open blocks' compressed images and
   * uncompressed pending records, the index and the per-page metadata, counted as the bytes of the
   * keys and values the store writes (what the backend then does on disk, such as LevelDB's or
   * Cassandra's own compression and overheads, is not included).
   */
  storedBytes: number;
  /** Blocks holding at least one render: the sealed ones and the open ones. */
  blocks: number;
  /** Sealed blocks. */
  sealedBlocks: number;
  /** Renders of open blocks not yet compressed (until their block seals or `flush()` runs). */
  pendingRevisions: number;
}

/**
 * An archive of page renders. Append-only: a render, once archived, is never replaced or removed,
 * and a sealed block is never rewritten.
 *
 * Layout: the renders of one page go into its open block in the order they are appended; the block
 * is sealed (compressed as a whole, with a window spanning it) as soon as it holds
 * `blockRevisions` renders or `blockBytes` raw bytes, or when the next render would take it over
 * `blockBytes` (a single render larger than that has a block of its own), and the next render opens
 * the next block. Until then the open block's renders are kept durably as they are (pending) or, after
 * `flush()`, in a compressed image of the open block that later appends add to and the seal
 * replaces. Reading one render decompresses one block; sealed blocks recently read are cached,
 * bounded by bytes.
 *
 * Durability: `append` resolves once every render it was given is durable in the backend, so a
 * crash after that loses none of them. Appends from several handles or processes to one page are
 * serialised by a compare-and-set on the page's metadata, so none is lost or archived twice.
 */
export interface ArchiveStore extends AsyncDisposable {
  /**
   * Archives renders of one or more pages. A (title, rev, tid) already archived is skipped, never
   * replaced. Every render is checked before anything is written; renders of one page are
   * written in order, pages independently.
   * @throws InvalidArgumentError naming the render, the field and the limit, before anything is written.
   * @throws ObjectClosedError after close().
   */
  append(renders: Iterable<ArchivedRender>): Promise<ArchiveAppendResult>;

  /**
   * The render of `title` at `rev` with `tid`; without `tid`, the latest render of `rev` (the
   * highest tid). Null when the archive has none.
   * @throws ArchiveCorruptedError when the block (or pending record) holding it fails its checks.
   */
  get(title: string, rev: number, tid?: string): Promise<ArchivedRenderRead | null>;

  /** Which block holds a render, and whether it is sealed; null when not archived. */
  locate(title: string, rev: number, tid?: string): Promise<ArchiveLocation | null>;

  /** Counts and sizes of the whole archive, or of one page. */
  stats(title?: string): Promise<ArchiveStats>;

  /**
   * Compresses the pending renders of the open blocks this handle appended to into their images
   * (and seals any full block left unsealed), so that a page with fewer renders than a block holds
   * is kept compressed too. `close()` does it first.
   */
  flush(): Promise<void>;

  /** Flushes, then releases the handle (the table or the Cassandra session it opened). Idempotent. */
  close(): Promise<void>;
}

/** Options shared by both stores. */
export interface ArchiveStoreOptions {
  /** A block is sealed once it holds this many renders (1–1,000). @default 128 */
  blockRevisions?: number;
  /** … or this many raw bytes (1 KiB – 8 MiB); a render that would go over it opens the next block. @default 4 MiB */
  blockBytes?: number;
  /** Brotli quality of sealed blocks and images (0–11). @default 6 */
  quality?: number;
  /** Brotli window, log2 bytes (10–24). @default 24 */
  windowBits?: number;
  /** Decompressed sealed blocks kept for reads, bounded by their size in bytes (0 disables). @default 64 MiB */
  cacheBytes?: number;
  /** Pages appended to or flushed at once by one call. @default 8 */
  concurrency?: number;
  /** `flush()` on `close()`. @default true */
  flushOnClose?: boolean;
}

/** The defaults of {@link ArchiveStoreOptions}. */
export function defaultArchiveStoreOptions(): Required<ArchiveStoreOptions> {
  return { blockRevisions: 128, blockBytes: 4 * 1024 * 1024, quality: 6, windowBits: 24, cacheBytes: 64 * 1024 * 1024, concurrency: 8, flushOnClose: true };
}
