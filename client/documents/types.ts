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
