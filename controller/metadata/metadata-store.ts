/**
 * The controller's metadata in its own LevelDB (classic-level): scopes, tables with their placement,
 * segment stores, the segment-id counter and the routing generation.
 *
 * The whole model is loaded into memory at open and the in-memory copy is authoritative for reads
 * (this process holds the LevelDB lock, so nothing else writes). Every change is validated against
 * memory and written as one atomic batch with `sync: true` inside a single write queue, and memory is
 * updated only after the batch is durable: a crash leaves either the old or the new state, never a mix.
 * Store heartbeat times are soft state: they are persisted only with a registration or an address
 * change, because liveness after a restart starts from a grace period anyway.
 * A failed write is the last one (fail-stop, as in the segment store's group commit): LevelDB's log
 * may then end in a torn record that hides later records from recovery, and the failed batch may or
 * may not be on disk; only a restart (LevelDB recovers its log, the model is reloaded) is safe.
 */
import * as fs from 'node:fs';
import { ClassicLevel } from 'classic-level';
import { ErrorCodes } from '../../proto/error-codes';
import { errorMessage, KvtFault } from '../../proto/runtime/status';
import { PartitionRecord, ScopeRecord, StoreRecord, TableRecord, tableKey } from './records';
import { KeyedMutex } from './keyed-mutex';
import { assertTransition, REMOVED, TableState } from './table-state';

const SCOPE = 's:';
const TABLE = 't:';
const STORE = 'n:';
const NEXT_SEGMENT_ID = 'm:next-segment-id';
const GENERATION = 'm:generation';

type BatchOp = { type: 'put'; key: string; value: unknown } | { type: 'del'; key: string };

/** Opening failed because another process (or instance) holds the data directory's lock. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(readonly dataDir: string, options?: { cause?: unknown }) {
    super(`data directory ${dataDir} is in use by another controller`, options);
  }
}

/** Outcome of {@link MetadataStore.createTable}. */
export type CreateTableOutcome =
  | { kind: 'created'; table: TableRecord }
  | { kind: 'exists'; table: TableRecord }
  | { kind: 'no-scope' };

/** Outcome of {@link MetadataStore.deleteScope}. */
export type DeleteScopeOutcome = 'deleted' | 'missing' | 'not-empty';

function isLockError(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'LEVEL_LOCKED') return true;
  }
  return false;
}

/** The controller's persistent model. Reads are synchronous; writes are durable when they resolve. */
export class MetadataStore {
  private readonly scopes = new Map<string, ScopeRecord>();
  private readonly tables = new Map<string, TableRecord>();
  private readonly stores = new Map<string, StoreRecord>();
  private nextSegmentId = 1n;
  private generationValue = 0n;
  private readonly writes = new KeyedMutex();
  private closed = false;
  private failed: { err: unknown } | undefined;
  /** Called once, when a write fails; every later write is then refused with UNAVAILABLE. */
  onFailure: (err: unknown) => void = () => undefined;

  private constructor(
    private readonly db: ClassicLevel<string, unknown>,
    /** The directory holding the LevelDB files. */
    readonly dataDir: string,
  ) {}

  /**
   * Opens (creating if missing) the metadata in `dataDir` and loads it.
   * @throws {@link DataDirInUseError} when another controller holds the directory.
   */
  static async open(dataDir: string): Promise<MetadataStore> {
    fs.mkdirSync(dataDir, { recursive: true });
    const db = new ClassicLevel<string, unknown>(dataDir, { keyEncoding: 'utf8', valueEncoding: 'json' });
    try {
      await db.open();
    } catch (err) {
      if (isLockError(err)) throw new DataDirInUseError(dataDir, { cause: err });
      throw new Error(`cannot open the controller metadata in ${dataDir}: ${(err as Error).message}`, { cause: err });
    }
    const store = new MetadataStore(db, dataDir);
    try {
      await store.load();
    } catch (err) {
      await db.close();
      throw err;
    }
    return store;
  }

  private async load(): Promise<void> {
    for await (const [key, value] of this.db.iterator()) {
      if (key.startsWith(SCOPE)) this.scopes.set(key.slice(SCOPE.length), value as ScopeRecord);
      else if (key.startsWith(TABLE)) this.tables.set(key.slice(TABLE.length), value as TableRecord);
      else if (key.startsWith(STORE)) this.stores.set(key.slice(STORE.length), value as StoreRecord);
      else if (key === NEXT_SEGMENT_ID) this.nextSegmentId = BigInt(value as string);
      else if (key === GENERATION) this.generationValue = BigInt(value as string);
    }
  }

  /** Waits for queued writes, then closes the database. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.drain();
    await this.db.close();
  }

  // ---- reads ----

  hasScope(name: string): boolean {
    return this.scopes.has(name);
  }

  /** Scope names in ascending order. */
  listScopes(): string[] {
    return [...this.scopes.keys()].sort(compareNames);
  }

  getTable(scope: string, table: string): TableRecord | undefined {
    return this.tables.get(tableKey(scope, table));
  }

  /** The tables of `scope` (any state), sorted by name. */
  tablesInScope(scope: string): TableRecord[] {
    return [...this.tables.values()].filter((t) => t.scope === scope).sort((a, b) => compareNames(a.table, b.table));
  }

  /** Tables left CREATING or DELETING: the resumer's work list. */
  unfinishedTables(): TableRecord[] {
    return [...this.tables.values()].filter((t) => t.state !== 'ACTIVE');
  }

  getStore(storeId: string): StoreRecord | undefined {
    return this.stores.get(storeId);
  }

  /** Every known store, sorted by id. */
  listStores(): StoreRecord[] {
    return [...this.stores.values()].sort((a, b) => compareNames(a.storeId, b.storeId));
  }

  /** How many segments (partitions of any table) each store owns. */
  segmentCountsByStore(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const t of this.tables.values()) {
      for (const p of t.partitions) counts.set(p.storeId, (counts.get(p.storeId) ?? 0) + 1);
    }
    return counts;
  }

  /** The routing generation (u64 decimal string). */
  get generation(): string {
    return this.generationValue.toString();
  }

  // ---- writes ----

  /** Creates a scope; false when it exists. */
  createScope(name: string, nowMs: number): Promise<boolean> {
    return this.write(async () => {
      if (this.scopes.has(name)) return false;
      const record: ScopeRecord = { name, createdAtMs: nowMs };
      await this.commit([{ type: 'put', key: SCOPE + name, value: record }]);
      this.scopes.set(name, record);
      return true;
    });
  }

  /** Deletes a scope unless it is missing or still holds tables (in any state). */
  deleteScope(name: string): Promise<DeleteScopeOutcome> {
    return this.write(async () => {
      if (!this.scopes.has(name)) return 'missing';
      if ([...this.tables.values()].some((t) => t.scope === name)) return 'not-empty';
      await this.commit([{ type: 'del', key: SCOPE + name }]);
      this.scopes.delete(name);
      return 'deleted';
    });
  }

  /**
   * Persists a new table in CREATING with partition i on `owners[i]`, allocating fresh segment ids
   * from the counter in the same batch. Refuses when the scope is missing or the name is taken.
   */
  createTable(spec: { scope: string; table: string; owners: readonly string[]; nowMs: number }): Promise<CreateTableOutcome> {
    return this.write(async () => {
      if (!this.scopes.has(spec.scope)) return { kind: 'no-scope' } as const;
      const key = tableKey(spec.scope, spec.table);
      const existing = this.tables.get(key);
      if (existing) return { kind: 'exists', table: existing } as const;
      let next = this.nextSegmentId;
      const partitions: PartitionRecord[] = spec.owners.map((storeId, index) => ({ index, segmentId: (next++).toString(), storeId }));
      const record: TableRecord = {
        scope: spec.scope,
        table: spec.table,
        partitionCount: spec.owners.length,
        state: 'CREATING',
        createdAtMs: spec.nowMs,
        partitions,
      };
      await this.commit([
        { type: 'put', key: TABLE + key, value: record },
        { type: 'put', key: NEXT_SEGMENT_ID, value: next.toString() },
      ]);
      this.tables.set(key, record);
      this.nextSegmentId = next;
      return { kind: 'created', table: record } as const;
    });
  }

  /**
   * Moves a table to `to`; a no-op when it is already there.
   * @throws IllegalTableStateTransitionError for a move the transition table does not list.
   * @throws Error when the table does not exist.
   */
  transitionTable(scope: string, table: string, to: TableState): Promise<TableRecord> {
    return this.write(async () => {
      const key = tableKey(scope, table);
      const current = this.tables.get(key);
      if (!current) throw new Error(`table ${key} does not exist`);
      if (current.state === to) return current;
      assertTransition(key, current.state, to);
      const record: TableRecord = { ...current, state: to };
      await this.commit([{ type: 'put', key: TABLE + key, value: record }]);
      this.tables.set(key, record);
      return record;
    });
  }

  /** Removes a DELETING table's metadata; a no-op when it is already gone. */
  removeTable(scope: string, table: string): Promise<void> {
    return this.write(async () => {
      const key = tableKey(scope, table);
      const current = this.tables.get(key);
      if (!current) return;
      assertTransition(key, current.state, REMOVED);
      await this.commit([{ type: 'del', key: TABLE + key }]);
      this.tables.delete(key);
    });
  }

  /**
   * Adds a store or updates its address. A new store or a new address bumps the routing generation in
   * the same batch. Resolves what changed.
   */
  upsertStore(storeId: string, address: string, nowMs: number): Promise<{ created: boolean; addressChanged: boolean }> {
    return this.write(async () => {
      const current = this.stores.get(storeId);
      if (current && current.address === address) return { created: false, addressChanged: false };
      const record: StoreRecord = { storeId, address, lastHeartbeatMs: nowMs };
      const generation = this.generationValue + 1n;
      await this.commit([
        { type: 'put', key: STORE + storeId, value: record },
        { type: 'put', key: GENERATION, value: generation.toString() },
      ]);
      this.stores.set(storeId, record);
      this.generationValue = generation;
      return { created: current === undefined, addressChanged: current !== undefined };
    });
  }

  /** Increments the routing generation (a store's liveness changed, or the controller restarted). */
  bumpGeneration(): Promise<string> {
    return this.write(async () => {
      const generation = this.generationValue + 1n;
      await this.commit([{ type: 'put', key: GENERATION, value: generation.toString() }]);
      this.generationValue = generation;
      return generation.toString();
    });
  }

  private write<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the controller metadata store is closed'));
    return this.writes.run('metadata', () => {
      this.assertWritable();
      return work();
    });
  }

  private assertWritable(): void {
    if (!this.failed) return;
    throw new KvtFault(ErrorCodes.UNAVAILABLE, `controller metadata storage failed (${errorMessage(this.failed.err)}); restart the controller to recover`);
  }

  /** Writes `ops` (inside {@link write}, which refused the work if the store had failed). */
  private async commit(ops: BatchOp[]): Promise<void> {
    try {
      await this.db.batch(ops, { sync: true });
    } catch (err) {
      if (!this.failed) {
        this.failed = { err };
        this.onFailure(err);
      }
      throw err;
    }
  }
}

/** Names are ASCII ([A-Za-z0-9.-]), so code-unit order is byte order. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
