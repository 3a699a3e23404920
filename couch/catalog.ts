/**
 * The databases of a CouchDB endpoint: each one a key-value table of one scope, served through a
 * {@link DocumentStore}. {@link KvtCatalog} keeps them on a kvt cluster (what `kvt couch` serves);
 * {@link MemoryCatalog} keeps them in `InMemoryKeyValueTable`s, the same semantics in this process,
 * for tests of the HTTP layer and of apps (as InMemoryKeyValueTable stands beside the gRPC table).
 */
import { DocumentStore, InMemoryKeyValueTable, KeyValueTable, KeyValueTableFactory, KeyValueTableManager, Serializers, TableNotFoundError } from '../client';
import { CouchError, noDatabase, notFound } from './errors';

/** CouchDB's and kvt's database names at once: a lowercase letter, then lowercase letters, digits and `-`. */
const DATABASE_NAME = /^[a-z][a-z0-9-]{0,249}$/;

/** @throws CouchError 400 `illegal_database_name` unless `name` is a database name both CouchDB and kvt take (404 for `_` names: CouchDB's endpoints). */
export function checkDatabaseName(name: string): string {
  // CouchDB's own endpoints (`/_replicate`, `/_session`, …) are names no database takes.
  if (name.startsWith('_')) throw notFound(`kvt's CouchDB endpoint does not serve /${name.slice(0, 300)}`);
  if (!DATABASE_NAME.test(name)) {
    throw new CouchError(
      400,
      'illegal_database_name',
      `Name: ${JSON.stringify(name.slice(0, 300))}. Only lowercase letters (a-z), digits (0-9) and "-" are allowed, 1 to 250 of them, starting with a letter (kvt table names take no "_", "$", "(", ")", "+" or "/")`,
    );
  }
  return name;
}

/** An open database. */
export interface Database {
  readonly name: string;
  readonly store: DocumentStore;
  readonly partitionCount: number;
}

/** Where the databases are. */
export interface DatabaseCatalog {
  /** The database (opened once, then cached). @throws CouchError 404 when it does not exist. */
  open(name: string): Promise<Database>;
  /** Creates a database of `partitionCount` partitions: false when it exists. */
  create(name: string, partitionCount: number): Promise<boolean>;
  /** Deletes a database: false when it does not exist. */
  remove(name: string): Promise<boolean>;
  /** Every database's name, sorted. */
  list(): Promise<string[]>;
  /** Forgets an open database whose table turned out to be gone (deleted by someone else). */
  forget(name: string): Promise<void>;
  /** Closes every open database (waiting for their feed indexing). */
  close(): Promise<void>;
}

type BytesTable = KeyValueTable<Uint8Array, Uint8Array>;

/** A cache of open databases, each opened once even when asked for concurrently. */
abstract class CachingCatalog implements DatabaseCatalog {
  private readonly opened = new Map<string, Promise<Database & { table: BytesTable }>>();

  protected abstract openTable(name: string): Promise<{ table: BytesTable; partitionCount: number }>;
  abstract create(name: string, partitionCount: number): Promise<boolean>;
  protected abstract removeTable(name: string): Promise<boolean>;
  abstract list(): Promise<string[]>;

  open(name: string): Promise<Database> {
    checkDatabaseName(name);
    let db = this.opened.get(name);
    if (db === undefined) {
      db = this.openTable(name).then(({ table, partitionCount }) => ({ name, table, partitionCount, store: new DocumentStore(table, { partitionCount }) }));
      this.opened.set(name, db);
      db.catch(() => this.opened.delete(name));
    }
    return db;
  }

  async remove(name: string): Promise<boolean> {
    checkDatabaseName(name);
    await this.forget(name);
    return this.removeTable(name);
  }

  async forget(name: string): Promise<void> {
    const db = this.opened.get(name);
    this.opened.delete(name);
    if (db === undefined) return;
    const open = await db.catch(() => undefined);
    if (open === undefined) return;
    await open.store.close().catch(() => undefined);
    await this.releaseTable(open.table);
  }

  /** Lets go of a table handle no longer used. */
  protected async releaseTable(table: BytesTable): Promise<void> {
    await table.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.all([...this.opened.keys()].map((name) => this.forget(name)));
  }
}

/** The databases as tables of one scope of a kvt cluster. */
export class KvtCatalog extends CachingCatalog {
  constructor(
    private readonly manager: KeyValueTableManager,
    private readonly factory: KeyValueTableFactory,
    private readonly scope: string,
  ) {
    super();
  }

  protected async openTable(name: string): Promise<{ table: BytesTable; partitionCount: number }> {
    let partitionCount: number;
    try {
      ({ partitionCount } = await this.manager.getKeyValueTableConfiguration(this.scope, name));
    } catch (err) {
      if (err instanceof TableNotFoundError) throw noDatabase(name);
      throw err;
    }
    // Values are views into the responses: the store decodes each at once and keeps none.
    return { table: this.factory.forKeyValueTable(name, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytesView }), partitionCount };
  }

  async create(name: string, partitionCount: number): Promise<boolean> {
    checkDatabaseName(name);
    return this.manager.createKeyValueTable(this.scope, name, { partitionCount });
  }

  protected removeTable(name: string): Promise<boolean> {
    return this.manager.deleteKeyValueTable(this.scope, name);
  }

  async list(): Promise<string[]> {
    const names: string[] = [];
    for await (const t of this.manager.listKeyValueTables(this.scope)) if (DATABASE_NAME.test(t.name)) names.push(t.name);
    return names.sort();
  }
}

/** The databases as in-memory tables of this process (nothing is kept after it ends). */
export class MemoryCatalog extends CachingCatalog {
  private readonly tables = new Map<string, InMemoryKeyValueTable<Uint8Array, Uint8Array>>();

  protected async openTable(name: string): Promise<{ table: BytesTable; partitionCount: number }> {
    const table = this.tables.get(name);
    if (table === undefined) throw noDatabase(name);
    return { table, partitionCount: table.partitionCount };
  }

  async create(name: string, partitionCount: number): Promise<boolean> {
    checkDatabaseName(name);
    if (this.tables.has(name)) return false;
    this.tables.set(name, new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount, name }));
    return true;
  }

  protected async removeTable(name: string): Promise<boolean> {
    const table = this.tables.get(name);
    this.tables.delete(name);
    await table?.close();
    return table !== undefined;
  }

  /** The tables are the data: an open database's handle is the table itself, closed only with its database. */
  protected override async releaseTable(): Promise<void> {}

  async list(): Promise<string[]> {
    return [...this.tables.keys()].sort();
  }
}
