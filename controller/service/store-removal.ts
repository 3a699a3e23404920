/**
 * Retiring a dead segment store for good (RemoveSegmentStore), as `etcdctl member remove` or
 * `nodetool removenode` do. Nothing is replicated, so this is an operator's decision that the store's
 * disk is gone: what only it held is abandoned, and its id is refused from then on.
 *
 * 1. Checks: the store is registered (else SEGMENT_STORE_NOT_FOUND; a store removed before gets that
 *    removal's report again) and not live (SEGMENT_STORE_LIVE), and at once the registry claims it, so
 *    that it cannot come back to life while the removal is written; it holds no partition of an ACTIVE
 *    table unless `force` (else SEGMENT_STORE_HOLDS_DATA naming the tables).
 * 2. Under the locks of its tables, one metadata batch (MetadataStore.removeStore): the store's record
 *    becomes a removed-store record; partitions of CREATING tables move to live stores; partitions of
 *    ACTIVE tables get replacement segments there (routing moves once they exist); its segments of
 *    DELETING tables count as deleted. From here the removal is durable: a restarted controller refuses
 *    the store and its resumer finishes the tables.
 * 3. Finishes the tables it touched as the resumer would, within `createWaitMs`; tables left over are
 *    reported unfinished (a store they need is unreachable) and the resumer goes on with them.
 */
import { ErrorCodes } from '../../proto/error-codes';
import type { RemoveSegmentStoreResponse, ReplacedPartition, TableName } from '../../proto/messages';
import type { Logger } from '../../server-kit/log';
import { KvtFault } from '../../server-kit/fault';
import { KeyedMutex } from '../metadata/keyed-mutex';
import type { MetadataStore } from '../metadata/metadata-store';
import { partitionKey, RemovedStoreRecord, ReplacedPartitionRecord, TableRecord, tableKey } from '../metadata/records';
import type { StoreRemovalPlan } from '../metadata/store-removal-plan';
import { placePartitions } from '../placement/placement';
import type { StoreRegistry } from './store-registry';
import type { TableOperations, TableOperationsOptions } from './table-operations';

/** Plans made and found stale (a table placed on the store meanwhile) before a removal gives up. */
const MAX_ATTEMPTS = 3;
/** Tables named in a SEGMENT_STORE_HOLDS_DATA message; more are counted. */
const MAX_NAMED_TABLES = 20;

/** Removes segment stores, one at a time. */
export class StoreRemoval {
  private readonly removals = new KeyedMutex();
  private readonly clock: () => number;

  constructor(
    private readonly meta: MetadataStore,
    private readonly registry: StoreRegistry,
    private readonly ops: TableOperations,
    /** The same as the table operations': `createWaitMs` bounds the finishing of the tables. */
    private readonly options: TableOperationsOptions,
    private readonly logger: Logger,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /** Removes `storeId` (see the file's comment); the id has been validated. */
  remove(storeId: string, force: boolean): Promise<RemoveSegmentStoreResponse> {
    return this.removals.run('removal', async () => {
      const earlier = this.meta.getRemovedStore(storeId);
      if (earlier) return report(earlier, false, await this.finishTables(earlier));
      const record = await this.write(storeId, force);
      this.logger.warn('segment store removed', {
        storeId,
        address: record.address,
        lostPartitions: record.lost.length,
        placedPartitions: record.placed.length,
        deletingTables: record.deleting.length,
      });
      return report(record, true, await this.finishTables(record));
    });
  }

  /** Steps 1 and 2: resolves the durable removed-store record. */
  private async write(storeId: string, force: boolean): Promise<RemovedStoreRecord> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const store = this.meta.getStore(storeId);
      if (!store) throw new KvtFault(ErrorCodes.SEGMENT_STORE_NOT_FOUND, `segment store ${storeId} is not known to the controller`);
      this.registry.claimForRemoval(storeId, store.address);
      let outcome;
      try {
        this.plan(storeId, force); // refuses before waiting for any lock
        const keys = this.meta.tablesOnStore(storeId).map((t) => tableKey(t.scope, t.table));
        // Planned again under the locks: a create that held one may have finished meanwhile.
        outcome = await this.ops.withTableLocks(keys, () => this.meta.removeStore(this.plan(storeId, force)));
      } catch (err) {
        this.registry.releaseClaim(storeId);
        throw err;
      }
      if (outcome.kind === 'removed') {
        this.registry.forget(storeId);
        return outcome.record;
      }
      this.registry.releaseClaim(storeId);
    }
    throw new KvtFault(ErrorCodes.UNAVAILABLE, `tables were placed on segment store ${storeId} while it was being removed; nothing was removed: try again`);
  }

  /**
   * The removal of `storeId` as things stand: a live store for each partition that moves.
   * @throws KvtFault SEGMENT_STORE_HOLDS_DATA (without force), UNAVAILABLE when no live store can take them
   */
  private plan(storeId: string, force: boolean): StoreRemovalPlan {
    const basis = this.meta.tablesOnStore(storeId);
    const on = (t: TableRecord) => t.partitions.filter((p) => p.storeId === storeId);
    // A replacement segment not yet in use holds nothing.
    const holding = basis.filter((t) => t.state === 'ACTIVE' && on(t).some((p) => !p.replaces));
    if (holding.length > 0 && !force)
      throw holdsData(
        storeId,
        holding.map((t) => ({ table: t, partitions: on(t).filter((p) => !p.replaces) })),
      );
    const moving = basis.filter((t) => t.state !== 'DELETING').flatMap((t) => on(t).map((p) => partitionKey(t.scope, t.table, p.index)));
    const live = this.registry.placeableStoreIds().filter((id) => id !== storeId);
    if (moving.length > 0 && live.length === 0) {
      throw new KvtFault(ErrorCodes.UNAVAILABLE, `no live segment store can take the ${moving.length} partitions of segment store ${storeId}; nothing was removed`);
    }
    const owners = moving.length === 0 ? [] : placePartitions(moving.length, live, this.meta.segmentCountsByStore());
    return { storeId, nowMs: this.clock(), basis, newOwners: new Map(moving.map((key, i) => [key, owners[i]])) };
  }

  /** Step 3: finishes the tables the removal touched; resolves the ones left unfinished. */
  private async finishTables(record: RemovedStoreRecord): Promise<TableName[]> {
    const tables = new Map<string, TableName>();
    for (const t of [...record.lost, ...record.placed, ...record.deleting]) tables.set(tableKey(t.scope, t.table), { scope: t.scope, table: t.table });
    const deadline = this.clock() + this.options.createWaitMs;
    const finished = await Promise.all(
      [...tables.values()].map((t) =>
        this.ops.finish(t.scope, t.table, deadline).catch((err: unknown) => {
          this.logger.error('finishing a table after a store removal failed', { storeId: record.storeId, scope: t.scope, table: t.table, err });
          return false;
        }),
      ),
    );
    return [...tables.values()].filter((_, i) => !finished[i]);
  }
}

function holdsData(storeId: string, holding: Array<{ table: TableRecord; partitions: Array<{ index: number }> }>): KvtFault {
  const count = holding.reduce((n, h) => n + h.partitions.length, 0);
  const named = holding.slice(0, MAX_NAMED_TABLES).map(({ table, partitions }) => {
    const indexes = partitions.map((p) => p.index);
    return `${tableKey(table.scope, table.table)} (partition${indexes.length > 1 ? 's' : ''} ${indexes.join(', ')})`;
  });
  if (holding.length > MAX_NAMED_TABLES) named.push(`and ${holding.length - MAX_NAMED_TABLES} more tables`);
  return new KvtFault(
    ErrorCodes.SEGMENT_STORE_HOLDS_DATA,
    `segment store ${storeId} holds the only copy of ${count} partition${count > 1 ? 's' : ''} of ACTIVE tables: ${named.join(', ')}; ` +
      'removing it loses their data: remove it with force to give them new, empty segments on live stores',
  );
}

function report(record: RemovedStoreRecord, removed: boolean, unfinishedTables: TableName[]): RemoveSegmentStoreResponse {
  const partition = (p: ReplacedPartitionRecord): ReplacedPartition => ({
    scope: p.scope,
    table: p.table,
    partition: p.index,
    segmentId: p.segmentId,
    newSegmentId: p.newSegmentId,
    newStoreId: p.newStoreId,
  });
  return {
    removed,
    address: record.address,
    lostPartitions: record.lost.map(partition),
    placedPartitions: record.placed.map(partition),
    deletingTables: record.deleting.map((t) => ({ scope: t.scope, table: t.table })),
    unfinishedTables,
  };
}
