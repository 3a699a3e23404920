/** The public shapes of the document store (DESIGN §5, §7). */
import type { KvtError } from '../errors';
import type { DocumentBody } from './canonical-json';

export type { DocumentBody };

/** Options of a {@link DocumentStore}. */
export interface DocumentStoreOptions {
  /** Revision positions each branch keeps, counting its leaf (CouchDB's `_revs_limit`); 1–4000. @default 1000 */
  revsLimit?: number;
  /**
   * The table's partition count. Taken from the table when it exposes `partitionCount` (as
   * `InMemoryKeyValueTable` does); required otherwise — `manager.getKeyValueTableConfiguration`
   * tells it. Every store on one table must be given the same count (the feed layout depends on it).
   */
  partitionCount?: number;
  /** Milliseconds since the epoch: the time of a change (the feed's merge order) and of a marker. @default Date.now */
  clock?: () => number;
  /**
   * How long a marker of an edit under way protects it: a changes read removes a marker older than
   * this (after indexing its document). Longer than any edit takes. @default 300000 (5 minutes)
   */
  markerLeaseMs?: number;
}

/** Options of {@link DocumentStore.put}. */
export interface PutDocumentOptions {
  /** The leaf to extend; none to create the document (or re-create a deleted one). */
  rev?: string;
  /** Store the edit as a deletion (a tombstone keeping `body`). @default false */
  deleted?: boolean;
}

/** What an edit made. */
export interface DocumentWriteResult {
  id: string;
  rev: string;
}

/** Options of {@link DocumentStore.get}. */
export interface GetDocumentOptions {
  /** Read this leaf (deleted or not) instead of the winner; a rev whose body is not kept reads as null. */
  rev?: string;
  /** Add `_conflicts`: the revs of the other live leaves, winner order (highest first). @default false */
  conflicts?: boolean;
  /** Add `_deleted_conflicts`: the revs of the deleted leaves other than the one read. @default false */
  deletedConflicts?: boolean;
  /** Add `_revisions`: the read leaf's kept path, `{ start, ids }` newest first. @default false */
  revs?: boolean;
}

/** CouchDB's `_revisions`: the leaf at `start`, then its ancestors' hashes, newest first. */
export interface Revisions {
  start: number;
  ids: string[];
}

/** A document as read: the body's members beside CouchDB's special members. */
export type StoredDocument = DocumentBody & {
  _id: string;
  _rev: string;
  _deleted?: true;
  _conflicts?: string[];
  _deleted_conflicts?: string[];
  _revisions?: Revisions;
};

/** A document as replication writes it (CouchDB's `_bulk_docs` shape). */
export type ReplicatedDocument = DocumentBody & {
  _id: string;
  _rev: string;
  /** The leaf's path; without it the rev alone (a path of one). */
  _revisions?: Revisions;
  _deleted?: boolean;
};

/** Options of {@link DocumentStore.bulkDocs}. */
export interface BulkDocsOptions {
  /**
   * false: replication — store the revisions as sent, merging their paths into each tree. true:
   * interactive edits, each as {@link DocumentStore.put} (`_rev` the leaf to extend). @default true
   */
  newEdits?: boolean;
}

/** One document's outcome in {@link DocumentStore.bulkDocs}: its rev, or the error of its edit. */
export type BulkDocsResult = { id: string; rev: string; error?: undefined } | { id: string; rev?: string; error: KvtError };

/** Options of {@link DocumentStore.changes}. */
export interface ChangesOptions {
  /** A `seq` or `lastSeq` of an earlier read: list the changes after it. @default the beginning */
  since?: string;
  /** At most this many results (1–100000); `lastSeq` resumes after the last. @default all */
  limit?: number;
  /** Add `leaves` to each result: every leaf rev of the document (CouchDB's `style=all_docs`). @default false */
  allLeaves?: boolean;
  /**
   * When nothing changed after `since`, wait up to this many milliseconds for a change before
   * answering (CouchDB's `feed=longpoll`); 0 answers at once. At most {@link MAX_CHANGES_WAIT_MS}. @default 0
   */
  timeoutMs?: number;
  /** Ends a wait early: the read then answers with what it has. */
  signal?: AbortSignal;
}

/** One document in a changes read: its newest change. */
export interface Change {
  id: string;
  /** Resumes the feed right after this result. Opaque. */
  seq: string;
  /** The winning rev after the change. */
  rev: string;
  /** True when the winning leaf is deleted. */
  deleted: boolean;
  /** With `allLeaves`: every leaf rev of the document as read after the change, deleted ones too, the winner first. */
  leaves?: string[];
}

/** A changes read. */
export interface ChangesResponse {
  results: Change[];
  /** Resumes the feed after this read. Opaque. */
  lastSeq: string;
}

/** CouchDB's `_revs_diff` answer for one document (documents missing nothing are left out). */
export interface RevsDiffEntry {
  missing: string[];
  /** Leaves of the document that could be ancestors of a missing rev (lower positions). */
  possible_ancestors?: string[];
}

/** A local document as read (CouchDB's `_local/<id>`): its rev is `0-<n>`, n counting its writes. */
export type LocalDocument = DocumentBody & { _id: string; _rev: string };

/** Options of {@link DocumentStore.allDocs}. */
export interface AllDocsOptions {
  /** These documents, in this order (a missing one reads as a row with rev null); instead of a range. */
  keys?: readonly string[];
  /** The first id listed (the highest with `descending`). @default the first */
  startKey?: string;
  /** The last id listed (the lowest with `descending`). @default the last */
  endKey?: string;
  /** List `endKey` itself. @default true */
  inclusiveEnd?: boolean;
  /** Highest id first. @default false */
  descending?: boolean;
  /** At most this many rows (0–100000). @default all */
  limit?: number;
  /** Leave out this many rows first. @default 0 */
  skip?: number;
  /** Add each row's winning document. @default false */
  includeDocs?: boolean;
  /** With `includeDocs`: add `_conflicts` to the documents. @default false */
  conflicts?: boolean;
}

/** One row of {@link DocumentStore.allDocs}. */
export interface AllDocsRow {
  id: string;
  /** The winning rev; null for a key that names no document. */
  rev: string | null;
  /** True when the winner is deleted (only `keys` lists deleted documents). */
  deleted: boolean;
  /** With `includeDocs`: the winning document (null when missing or deleted). */
  doc?: StoredDocument | null;
}

/** The answer of {@link DocumentStore.allDocs}: rows in id order (UTF-8 bytes; the keys' order with `keys`). */
export interface AllDocsResponse {
  rows: AllDocsRow[];
}

/** Options of {@link DocumentStore.openRevs}. */
export interface OpenRevsOptions {
  /** For a rev that is no longer a leaf, the leaves descending from it (CouchDB's `latest`). @default false */
  latest?: boolean;
  /** Add `_revisions` to each document. @default false */
  revs?: boolean;
}

/** One answer of {@link DocumentStore.openRevs}: a leaf's document, or a rev that is not a leaf. */
export type OpenRev = { ok: StoredDocument } | { missing: string };

/** What {@link DocumentStore.info} counts. */
export interface DocumentStoreInfo {
  /** Documents whose winner is not deleted. */
  documents: number;
  /** Documents whose winner is deleted. */
  deletedDocuments: number;
  /** A sequence after every change made so far: `changes({ since })` lists what comes next. */
  updateSeq: string;
}
