/** The part of pouchdb-node's API the document benchmark uses (the package ships no types). */
declare module 'pouchdb-node' {
  interface PouchChange {
    id: string;
    seq: number | string;
    changes: { rev: string }[];
    deleted?: boolean;
  }
  interface PouchDatabase {
    put(doc: Record<string, unknown>): Promise<{ ok: boolean; id: string; rev: string }>;
    get(id: string, options?: Record<string, unknown>): Promise<Record<string, unknown>>;
    bulkDocs(docs: Record<string, unknown>[], options?: { new_edits?: boolean }): Promise<unknown[]>;
    changes(options: { since?: number | string; limit?: number }): Promise<{ results: PouchChange[]; last_seq: number | string }>;
    close(): Promise<void>;
    destroy(): Promise<void>;
  }
  const PouchDB: new (name: string, options?: Record<string, unknown>) => PouchDatabase;
  export = PouchDB;
}
