/**
 * Creating and deleting key-value tables, and finishing the ones a crash left midway.
 *
 * Create: persist CREATING with the placement and fresh segment ids, CreateSegment on every owning
 * store, then ACTIVE; only then does the caller hear created=true. Segments go only to live stores
 * heard from since this controller started (StoreRegistry.placeableStoreIds); with none the request
 * waits up to `createWaitMs` for one and then fails UNAVAILABLE having written nothing. When stores are
 * live but some segment cannot be created within `createWaitMs`, the request fails UNAVAILABLE and the
 * table stays CREATING: the resumer finishes it once the store is back. Creating it again with the
 * same partition count meanwhile tries to finish it the same way, within `createWaitMs`: created=true
 * once it is ACTIVE, else UNAVAILABLE again. (Answering created=false, as for a table that exists,
 * turned the first caller's retry of its UNAVAILABLE into "exists" for a table nobody could use yet.)
 * Creating a table left DELETING first finishes the delete the same way, within `createWaitMs`, then
 * creates the table anew; else UNAVAILABLE (it was answered created=false, for a table about to be
 * gone). Another partition count of a CREATING table, or an ACTIVE one: created=false.
 *
 * Delete: persist DELETING, DeleteSegment on every store, then remove the metadata and answer
 * deleted=true. Unreachable stores: as for create, UNAVAILABLE after `createWaitMs`, the table stays
 * DELETING and the resumer finishes it.
 *
 * Replacement segments (an ACTIVE table's partitions moved off a removed store, see store-removal.ts):
 * created like a create's, then put into use with a new routing generation; until then routing keeps
 * the old segment. The resumer finishes them like an unfinished create.
 *
 * Operations on one table are serialized by a per-table lock, so a create and a delete of the same
 * name (or the resumer, or a store removal) never interleave.
 */
import { ErrorCodes } from '../../proto/error-codes';
import { KvtFault } from '../../server-kit/fault';
import type { Logger } from '../../server-kit/log';
import { KeyedMutex } from '../metadata/keyed-mutex';
import { isUnfinished, MetadataStore } from '../metadata/metadata-store';
import { PartitionRecord, TableRecord, tableKey } from '../metadata/records';
import { placePartitions } from '../placement/placement';
import type { SegmentFailure, SegmentWork } from './segment-work';
import type { StoreRegistry } from './store-registry';

/** Pause between retry rounds of segment calls within one request. */
const RETRY_PAUSE_MS = 250;

/** What the table operations need to know of the controller's config. */
export interface TableOperationsOptions {
  createWaitMs: number;
  /** @default Date.now */
  clock?: () => number;
}

/** Table create / delete / resume, serialized per table. */
export class TableOperations {
  private readonly locks = new KeyedMutex();
  private readonly clock: () => number;
  private stopping = false;

  constructor(
    private readonly meta: MetadataStore,
    private readonly registry: StoreRegistry,
    private readonly work: SegmentWork,
    private readonly options: TableOperationsOptions,
    private readonly logger: Logger,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Creates a table; false when it exists (any configuration, any state but a CREATING one of this
   * partition count, which it finishes: see the module comment). Inputs are validated.
   */
  create(scope: string, table: string, partitionCount: number): Promise<boolean> {
    return this.locks.run(tableKey(scope, table), async () => {
      if (!this.meta.hasScope(scope)) throw scopeNotFound(scope);
      const existing = this.meta.getTable(scope, table);
      const waitUntil = this.clock() + this.options.createWaitMs;
      if (existing?.state === 'DELETING') {
        // Not a table that exists: finish deleting it first (or fail UNAVAILABLE, it stays DELETING).
        await this.retryUntil(existing, 'delete', waitUntil);
        await this.meta.removeTable(scope, table);
        this.logger.info('table deleted', { table: tableKey(scope, table), beforeCreate: true });
      } else if (existing) {
        if (existing.state !== 'CREATING' || existing.partitionCount !== partitionCount) return false;
        return this.finishCreate(existing, waitUntil);
      }
      if (!(await this.registry.waitForPlaceableStore(waitUntil, () => this.stopping))) {
        throw new KvtFault(ErrorCodes.UNAVAILABLE, `no live segment store within ${this.options.createWaitMs} ms; table ${tableKey(scope, table)} was not created`);
      }
      const owners = placePartitions(partitionCount, this.registry.placeableStoreIds(), this.meta.segmentCountsByStore());
      const outcome = await this.meta.createTable({ scope, table, owners, nowMs: this.clock() });
      if (outcome.kind === 'no-scope') throw scopeNotFound(scope);
      if (outcome.kind === 'exists') return false;
      this.logger.info('table creating', { table: tableKey(scope, table), partitionCount, stores: new Set(owners).size });
      return this.finishCreate(outcome.table, this.clock() + this.options.createWaitMs);
    });
  }

  /** Creates the segments of a CREATING table (held under its lock), then makes it ACTIVE; true. @throws UNAVAILABLE past `deadlineMs` */
  private async finishCreate(record: TableRecord, deadlineMs: number): Promise<boolean> {
    await this.retryUntil(record, 'create', deadlineMs);
    await this.meta.transitionTable(record.scope, record.table, 'ACTIVE');
    this.logger.info('table active', { table: tableKey(record.scope, record.table) });
    return true;
  }

  /** Deletes a table and its segments; false when it does not exist (or its scope does not). */
  delete(scope: string, table: string): Promise<boolean> {
    return this.locks.run(tableKey(scope, table), async () => {
      const record = this.meta.getTable(scope, table);
      if (!record) return false;
      const deleting = await this.meta.transitionTable(scope, table, 'DELETING');
      this.logger.info('table deleting', { table: tableKey(scope, table), from: record.state });
      await this.retryUntil(deleting, 'delete', this.clock() + this.options.createWaitMs);
      await this.meta.removeTable(scope, table);
      this.logger.info('table deleted', { table: tableKey(scope, table) });
      return true;
    });
  }

  /**
   * One attempt to finish a table left CREATING (segments, then ACTIVE), DELETING (segments, then
   * removal) or ACTIVE with replacement segments (segments, then in use). Resolves true when the table
   * is finished (or nothing was left to do).
   */
  resume(scope: string, table: string): Promise<boolean> {
    return this.locks.run(tableKey(scope, table), async () => {
      const record = this.meta.getTable(scope, table);
      if (!record || !isUnfinished(record)) return true;
      const mode = record.state === 'DELETING' ? 'delete' : 'create';
      const replacing = record.state === 'ACTIVE';
      const failures = await this.pass(record, mode, replacing ? record.partitions.filter((p) => p.replaces) : record.partitions);
      if (failures.length > 0) {
        this.logger.warn('table not finished yet', { table: tableKey(scope, table), state: record.state, failed: failures.length, reason: failures[0].reason });
        return false;
      }
      if (replacing) await this.meta.finishReplacements(record);
      else if (mode === 'create') await this.meta.transitionTable(scope, table, 'ACTIVE');
      else await this.meta.removeTable(scope, table);
      const done = replacing ? 'replacement segments in use' : mode === 'create' ? 'table active' : 'table deleted';
      this.logger.info(done, { table: tableKey(scope, table), resumed: true });
      return true;
    });
  }

  /** {@link resume} until the table is finished (true), or false once `deadlineMs` passes or the server stops. */
  async finish(scope: string, table: string, deadlineMs: number): Promise<boolean> {
    for (;;) {
      if (await this.resume(scope, table)) return true;
      if (this.stopping || this.clock() >= deadlineMs) return false;
      await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
    }
  }

  /** Runs `work` holding the locks of the tables `keys` (`scope/table`), taken in sorted order. */
  withTableLocks<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const nested = (i: number): Promise<T> => (i === sorted.length ? work() : this.locks.run(sorted[i], () => nested(i + 1)));
    return nested(0);
  }

  /** Makes running and later requests give up their retries (the server is stopping). */
  stop(): void {
    this.stopping = true;
  }

  /** Resolves once every queued table operation has settled. */
  drain(): Promise<void> {
    return this.locks.drain();
  }

  /** Segment calls in rounds until every partition is done, or UNAVAILABLE once `deadlineMs` passes. */
  private async retryUntil(record: TableRecord, mode: 'create' | 'delete', deadlineMs: number): Promise<void> {
    let pending: readonly PartitionRecord[] = record.partitions;
    for (;;) {
      const failures = await this.pass(record, mode, pending);
      if (failures.length === 0) return;
      if (this.stopping || this.clock() >= deadlineMs) throw unfinished(record, mode, failures);
      pending = failures.map((f) => f.partition);
      await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
    }
  }

  private pass(record: TableRecord, mode: 'create' | 'delete', partitions: readonly PartitionRecord[]): Promise<SegmentFailure[]> {
    return mode === 'create' ? this.work.createSegments(record, partitions) : this.work.deleteSegments(record, partitions);
  }
}

function scopeNotFound(scope: string): KvtFault {
  return new KvtFault(ErrorCodes.SCOPE_NOT_FOUND, `scope ${scope} does not exist`);
}

function unfinished(record: TableRecord, mode: 'create' | 'delete', failures: SegmentFailure[]): KvtFault {
  const name = tableKey(record.scope, record.table);
  const state = mode === 'create' ? 'CREATING' : 'DELETING';
  return new KvtFault(
    ErrorCodes.UNAVAILABLE,
    `table ${name} stays ${state}: ${failures.length} of ${record.partitionCount} segments could not be ${mode}d ` +
      `(${failures[0].reason}); the controller finishes it when the stores are reachable`,
  );
}
