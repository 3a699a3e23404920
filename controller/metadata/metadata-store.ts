/**
 * The controller's metadata in its own LevelDB (classic-level): scopes, tables with their placement,
 * segment stores (and the ones removed for good), the segment-id counter and the routing generation.
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
import { errorMessage, KvtFault } from '../../server-kit/fault';
import { PartitionRecord, RemovedStoreRecord, ScopeRecord, StoreRecord, TableRecord, tableKey } from './records';
import { KeyedMutex } from './keyed-mutex';
import { applyStoreRemoval, StoreRemovalOutcome, StoreRemovalPlan } from './store-removal-plan';
import { assertTransition, REMOVED, TableState } from './table-state';

const SCOPE = 's:';
const TABLE = 't:';
const STORE = 'n:';
const REMOVED_STORE = 'r:';
const NEXT_SEGMENT_ID = 'm:next-segment-id';
const GENERATION = 'm:generation';

type BatchOp = { type: 'put'; key: string; value: unknown } | { type: 'del'; key: string };

/** Opening failed because another process (or instance) holds the data directory's lock. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    options?: { cause?: unknown },
  ) {
    super(`data directory ${dataDir} is in use by another controller`, options);
  }
}

/** Outcome of {@link MetadataStore.createTable}. */
export type CreateTableOutcome = { kind: 'created'; table: TableRecord } | { kind: 'exists'; table: TableRecord } | { kind: 'no-scope' };

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
  private readonly removedStores = new Map<string, RemovedStoreRecord>();
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
      else if (key.startsWith(REMOVED_STORE)) this.removedStores.set(key.slice(REMOVED_STORE.length), value as RemovedStoreRecord);
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

  /** Tables left CREATING or DELETING, or with replacement segments not yet in use: the resumer's work list. */
  unfinishedTables(): TableRecord[] {
    return [...this.tables.values()].filter(isUnfinished);
  }

  /** The tables (any state) with a partition owned by `storeId`, sorted by `scope/table`. */
  tablesOnStore(storeId: string): TableRecord[] {
    return [...this.tables.values()].filter((t) => t.partitions.some((p) => p.storeId === storeId)).sort((a, b) => compareNames(tableKey(a.scope, a.table), tableKey(b.scope, b.table)));
  }

  getStore(storeId: string): StoreRecord | undefined {
    return this.stores.get(storeId);
  }

  /** The record of a store removed for good, if `storeId` is one. */
  getRemovedStore(storeId: string): RemovedStoreRecord | undefined {
    return this.removedStores.get(storeId);
  }

  /** The address of a registered store, or the last one of a removed store; '' for an unknown id. */
  storeAddress(storeId: string): string {
    return this.stores.get(storeId)?.address ?? this.removedStores.get(storeId)?.address ?? '';
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
      const gone = spec.owners.find((id) => this.removedStores.has(id));
      // The placement was made before a removal of that store was written.
      if (gone !== undefined) throw new KvtFault(ErrorCodes.UNAVAILABLE, `segment store ${gone} was removed meanwhile; table ${key} was not created: try again`);
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
      await this.commitWithNewGeneration([{ type: 'put', key: STORE + storeId, value: record }]);
      this.stores.set(storeId, record);
      return { created: current === undefined, addressChanged: current !== undefined };
    });
  }

  /**
   * Removes a store for good, in one batch: its record goes, a {@link RemovedStoreRecord} is kept, the
   * partitions it owns of CREATING tables move to `plan.newOwners` with fresh segments, those of ACTIVE
   * tables get fresh segments there marked `replaces` (routing moves when they exist, see
   * {@link finishReplacements}), and its segments of DELETING tables stay as they are (they count as
   * deleted). Writes nothing and resolves `stale` when the store's tables are no longer `plan.basis`.
   * @throws Error when the store is not registered, or `plan.newOwners` misses a partition (bugs)
   */
  removeStore(plan: StoreRemovalPlan): Promise<StoreRemovalOutcome> {
    return this.write(async () => {
      const store = this.stores.get(plan.storeId);
      if (!store) throw new Error(`segment store ${plan.storeId} is not registered`);
      const current = this.tablesOnStore(plan.storeId);
      if (current.length !== plan.basis.length || current.some((t, i) => t !== plan.basis[i])) return { kind: 'stale' } as const;
      const { record, moved, next } = applyStoreRemoval(plan, store.address, this.nextSegmentId);
      await this.commit([
        { type: 'put', key: REMOVED_STORE + plan.storeId, value: record },
        { type: 'del', key: STORE + plan.storeId },
        ...moved.map((t): BatchOp => ({ type: 'put', key: TABLE + tableKey(t.scope, t.table), value: t })),
        { type: 'put', key: NEXT_SEGMENT_ID, value: next.toString() },
      ]);
      this.removedStores.set(plan.storeId, record);
      this.stores.delete(plan.storeId);
      for (const t of moved) this.tables.set(tableKey(t.scope, t.table), t);
      this.nextSegmentId = next;
      return { kind: 'removed', record } as const;
    });
  }

  /**
   * Puts the replacement segments of an ACTIVE table into use (their segments exist): clears
   * `replaces` and bumps the routing generation in one batch, so clients refresh onto them.
   * @throws Error when `record` is no longer the table's current record (the caller holds its lock)
   */
  finishReplacements(record: TableRecord): Promise<TableRecord> {
    return this.write(async () => {
      const key = tableKey(record.scope, record.table);
      if (this.tables.get(key) !== record) throw new Error(`table ${key} changed while its replacement segments were created`);
      const updated: TableRecord = { ...record, partitions: record.partitions.map(({ index, segmentId, storeId }) => ({ index, segmentId, storeId })) };
      await this.commitWithNewGeneration([{ type: 'put', key: TABLE + key, value: updated }]);
      this.tables.set(key, updated);
      return updated;
    });
  }

  /** Increments the routing generation (a store's liveness changed, or the controller restarted). */
  bumpGeneration(): Promise<string> {
    return this.write(async () => {
      await this.commitWithNewGeneration([]);
      return this.generation;
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

  /** Writes `ops` with the routing generation incremented (inside {@link write}). */
  private async commitWithNewGeneration(ops: BatchOp[]): Promise<void> {
    const generation = this.generationValue + 1n;
    await this.commit([...ops, { type: 'put', key: GENERATION, value: generation.toString() }]);
    this.generationValue = generation;
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

/** CREATING, DELETING, or ACTIVE with replacement segments not yet in use. */
export function isUnfinished(t: TableRecord): boolean {
  return t.state !== 'ACTIVE' || t.partitions.some((p) => p.replaces !== undefined);
}

/** Names are ASCII ([A-Za-z0-9.-]), so code-unit order is byte order. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
