/** The public shapes of the page revision layer (DESIGN §4, §7). */
import type { ArchiveStore } from '../archive';

/** A body of a render: text (stored as UTF-8, read back as a string) or bytes (read back as a Buffer). */
export type RenderBody = string | Uint8Array;

/** Which render of a page: its title (the key family), revision and render id. */
export interface RenderKey {
  /** The page, e.g. `en.wikipedia.org/Main_Page`: the key family, as given. */
  title: string;
  /** The revision: a non-negative safe integer. */
  rev: number;
  /** The render's time-based (version 1) UUID, lowercase. */
  tid: string;
}

/** A render as read back. */
export interface Render extends RenderKey {
  /** The main body, of the type it was written with. */
  value: RenderBody;
  /** The render's headers (e.g. `content-type`); `{}` when it had none. */
  headers: Record<string, string>;
  /** The named extra bodies written with it (e.g. `data-parsoid`); `{}` when it had none. */
  parts: Record<string, RenderBody>;
}

/** A render to write. */
export interface RenderInput {
  title: string;
  rev: number;
  /** A time-based (version 1) UUID; a new one from the store's clock when absent. */
  tid?: string;
  value: RenderBody;
  headers?: Record<string, string>;
  /** Named extra bodies, written in the same atomic update and read back together with the value. */
  parts?: Record<string, RenderBody>;
}

/** What a `render` callback returns for a revision missing everywhere (or null when it cannot). */
export interface RenderedRevision {
  value: RenderBody;
  headers?: Record<string, string>;
  parts?: Record<string, RenderBody>;
  /** A time-based UUID; a new one from the store's clock when absent. */
  tid?: string;
}

/** Options of the reads of one render: {@link PageRevisionStore.getLatest}, `getRevision`, `getRender`. */
export interface ReadRenderOptions {
  /**
   * Every body as bytes, text ones too (their UTF-8), instead of as written: what an HTTP front end
   * sends on as it is, without decoding text it never looks at (a 14 KB page decoded to a string
   * costs the client about as much as the rest of its read). The bodies are views of the bytes read,
   * not copies. @default false
   */
  bytes?: boolean;
}

/** Options of {@link PageRevisionStore.putRender}. */
export interface PutRenderOptions {
  /** Only if no render with this (rev, tid) exists; otherwise RenderExistsError. @default false */
  ifAbsent?: boolean;
}

/** Options of {@link PageRevisionStore.listRevisions}. */
export interface ListRevisionsOptions {
  /** Items per page, 1–1,000. @default 10 */
  limit?: number;
  /** The `nextPageToken` of the page before. */
  pageToken?: string;
  /** Every render of every revision instead of the latest render of each. @default false */
  allRenders?: boolean;
}

/** A page of {@link PageRevisionStore.listRevisions}. */
export interface RevisionPage {
  items: Render[];
  /** Present when more items follow: pass it as `pageToken`. */
  nextPageToken?: string;
}

/** Options of {@link PageRevisionStore}. */
export interface PageRevisionStoreOptions {
  /**
   * How long a superseded revision or render stays readable after it was superseded (ms); later
   * writes to the page cull it from then on. @default 86_400_000 (24 h)
   */
  recencyWindowMs?: number;
  /** How long a render made by `render` on a miss is kept and served (ms). @default 86_400_000 (24 h) */
  historicalTtlMs?: number;
  /** Milliseconds since the epoch, for the window, the historical TTL and new tids. @default Date.now */
  clock?: () => number;
  /**
   * Called when `getRevision` finds a revision nowhere: renders it (or resolves null). Its result is
   * stored for `historicalTtlMs` and served from then on; concurrent misses of one (title, rev) call it once.
   */
  render?: (title: string, rev: number) => Promise<RenderedRevision | null | undefined>;
  /**
   * The HMAC-SHA256 key that signs list page tokens: stores that share it accept each other's
   * tokens. @default 32 random bytes (tokens are valid for this store object only)
   */
  tokenSecret?: string | Uint8Array;
  /**
   * An archive tier (KvtArchiveStore, CassandraArchiveStore): what a cull removes is appended to it
   * first and removed from the hot table only once the archive acknowledged it; getRevision and
   * getRender read it when the hot table has no such render (before `render` is asked).
   */
  archive?: ArchiveStore;
}
