/**
 * PouchDB (`pouchdb-node`: LevelDB databases, the HTTP adapter, replication) typed for the CouchDB
 * endpoint's benchmark and tests: a local database in a directory, a remote one at a kvt couch URL,
 * and the replication and reading calls they make. The package ships no types.
 */
import PouchDBModule from 'pouchdb-node';

/** A replication's outcome. */
export interface ReplicationResult {
  ok: boolean;
  docs_read: number;
  docs_written: number;
  doc_write_failures: number;
  last_seq?: unknown;
  errors: unknown[];
}

/** A running replication: awaitable (one-shot) or cancellable (live), with events. */
export interface Replication extends PromiseLike<ReplicationResult> {
  cancel(): void;
  on(event: 'change' | 'complete' | 'paused' | 'active' | 'error' | 'denied', listener: (info: unknown) => void): Replication;
}

/** A row of allDocs. */
export interface AllDocsRow {
  id?: string;
  key: string;
  value?: { rev: string; deleted?: boolean };
  doc?: Record<string, unknown> | null;
  error?: string;
}

/** The part of a PouchDB database the benchmark and tests use. */
export interface Pouch {
  name: string;
  put(doc: Record<string, unknown>, options?: Record<string, unknown>): Promise<{ ok: boolean; id: string; rev: string }>;
  get(id: string, options?: Record<string, unknown>): Promise<Record<string, unknown> & { _rev: string }>;
  remove(id: string, rev: string): Promise<{ ok: boolean; id: string; rev: string }>;
  bulkDocs(docs: Record<string, unknown>[], options?: { new_edits?: boolean }): Promise<{ ok?: boolean; id: string; rev?: string; error?: string }[]>;
  allDocs(options?: Record<string, unknown>): Promise<{ total_rows: number; rows: AllDocsRow[] }>;
  info(): Promise<Record<string, unknown>>;
  replicate: {
    to(target: Pouch | string, options?: Record<string, unknown>): Replication;
    from(source: Pouch | string, options?: Record<string, unknown>): Replication;
  };
  sync(other: Pouch | string, options?: Record<string, unknown>): Replication;
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/** How a remote database is reached: `auth` is basic auth (kvt takes its token as the password). */
export interface PouchOptions {
  auth?: { username: string; password: string };
  skip_setup?: boolean;
}

/** PouchDB's constructor: a path opens a LevelDB database, an http(s) URL a remote one. */
export const PouchDB = PouchDBModule as unknown as new (name: string, options?: PouchOptions) => Pouch;
