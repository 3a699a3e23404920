/**
 * One pass of segment calls for a table: CreateSegment (or DeleteSegment) for a set of its partitions
 * on their owning stores. Both calls are idempotent on the store, so a pass may repeat work a crashed
 * controller already did. A partition whose store is dead or unreachable is reported back, not retried
 * here: the caller decides whether to retry (within a request's bound) or leave it to the resumer.
 */
import type { Logger } from '../../server-kit/log';
import type { MetadataStore } from '../metadata/metadata-store';
import { PartitionRecord, TableRecord, tableKey } from '../metadata/records';
import type { SegmentStoreClients } from './segment-store-clients';
import type { StoreRegistry } from './store-registry';

/** A partition whose segment call did not succeed, and why. */
export interface SegmentFailure {
  partition: PartitionRecord;
  reason: string;
}

/** Calls in flight at once for one table (LevelDB on the stores does the rest). */
const CONCURRENCY = 16;

/** Drives the segment calls of create and delete. */
export class SegmentWork {
  constructor(
    private readonly meta: MetadataStore,
    private readonly registry: StoreRegistry,
    private readonly clients: SegmentStoreClients,
    private readonly logger: Logger,
    /** Test-only pause after each call; > 0 also makes the calls sequential. */
    private readonly pauseAfterSegmentMs = 0,
  ) {}

  /** Creates the segments of `partitions` of `table`; resolves the failures (empty = all exist). */
  createSegments(table: TableRecord, partitions: readonly PartitionRecord[]): Promise<SegmentFailure[]> {
    return this.forEach(partitions, async (p, address) => {
      const created = await this.clients.createSegment(address, p.segmentId, `${tableKey(table.scope, table.table)}#${p.index}`);
      this.logger.debug('segment created', { table: tableKey(table.scope, table.table), segmentId: p.segmentId, storeId: p.storeId, created });
    });
  }

  /**
   * Deletes the segments of `partitions` of `table`; resolves the failures (empty = all gone). The
   * segments of a removed store count as deleted: its data directory is to be wiped.
   */
  deleteSegments(table: TableRecord, partitions: readonly PartitionRecord[]): Promise<SegmentFailure[]> {
    const reachable = partitions.filter((p) => !this.meta.getRemovedStore(p.storeId));
    return this.forEach(reachable, async (p, address) => {
      const deleted = await this.clients.deleteSegment(address, p.segmentId);
      this.logger.debug('segment deleted', { table: tableKey(table.scope, table.table), segmentId: p.segmentId, storeId: p.storeId, deleted });
    });
  }

  private async forEach(partitions: readonly PartitionRecord[], call: (p: PartitionRecord, address: string) => Promise<void>): Promise<SegmentFailure[]> {
    const failures: SegmentFailure[] = [];
    const queue = [...partitions];
    const worker = async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        const failure = await this.one(p, call);
        if (failure) failures.push(failure);
        if (this.pauseAfterSegmentMs > 0) await new Promise((r) => setTimeout(r, this.pauseAfterSegmentMs));
      }
    };
    const workers = this.pauseAfterSegmentMs > 0 ? 1 : Math.min(CONCURRENCY, partitions.length);
    await Promise.all(Array.from({ length: workers }, worker));
    return failures.sort((a, b) => a.partition.index - b.partition.index);
  }

  private async one(p: PartitionRecord, call: (p: PartitionRecord, address: string) => Promise<void>): Promise<SegmentFailure | undefined> {
    const store = this.meta.getStore(p.storeId);
    // A dead store is not called: its calls would only wait for their deadline. It is retried on return.
    if (!store) return { partition: p, reason: `segment store ${p.storeId} is not registered` };
    if (!this.registry.isLive(p.storeId)) return { partition: p, reason: `segment store ${p.storeId} is not live` };
    try {
      await call(p, store.address);
      return undefined;
    } catch (err) {
      return { partition: p, reason: `segment store ${p.storeId} at ${store.address}: ${(err as Error).message}` };
    }
  }
}
