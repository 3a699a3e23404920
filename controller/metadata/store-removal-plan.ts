/**
 * What removing a segment store for good writes, as a pure function of the plan decided from the
 * tables on the store: its {@link RemovedStoreRecord}, the tables whose partitions move off it (with
 * fresh segment ids from the counter), and the counter's next value. {@link MetadataStore.removeStore}
 * checks the plan is not stale and writes the result in one batch.
 */
import { PartitionRecord, partitionKey, RemovedStoreRecord, ReplacedPartitionRecord, TableRecord } from './records';

/** What {@link MetadataStore.removeStore} writes, as decided from the tables it read. */
export interface StoreRemovalPlan {
  storeId: string;
  nowMs: number;
  /** Every table with a partition on the store, as {@link MetadataStore.tablesOnStore} gave them to the plan. */
  basis: readonly TableRecord[];
  /** The live store taking each partition on the store of a CREATING or ACTIVE table, keyed by {@link partitionKey}. */
  newOwners: ReadonlyMap<string, string>;
}

/** Outcome of {@link MetadataStore.removeStore}: `stale` when a table of the basis changed meanwhile (nothing written). */
export type StoreRemovalOutcome = { kind: 'removed'; record: RemovedStoreRecord } | { kind: 'stale' };

/** The records a store removal writes, computed from its plan. */
export interface StoreRemovalWrite {
  /** The removed store's record (also the removal's report). */
  record: RemovedStoreRecord;
  /** The tables of the basis that are not DELETING, with their partitions on the store moved. */
  moved: TableRecord[];
  /** The segment-id counter after the fresh segments. */
  next: bigint;
}

/**
 * Applies `plan` to its basis: the partitions on the store of CREATING tables move to their new owners
 * with fresh segments, those of ACTIVE tables get fresh segments there marked `replaces`, and DELETING
 * tables are only listed. Segment ids are handed out from `nextSegmentId` in the basis' order.
 * @throws Error when `plan.newOwners` misses a partition (a bug)
 */
export function applyStoreRemoval(plan: StoreRemovalPlan, address: string, nextSegmentId: bigint): StoreRemovalWrite {
  const record: RemovedStoreRecord = { storeId: plan.storeId, address, removedAtMs: plan.nowMs, lost: [], placed: [], deleting: [] };
  let next = nextSegmentId;
  const moved: TableRecord[] = [];
  for (const t of plan.basis) {
    if (t.state === 'DELETING') {
      record.deleting.push({ scope: t.scope, table: t.table });
      continue;
    }
    const partitions = t.partitions.map((p): PartitionRecord => {
      if (p.storeId !== plan.storeId) return p;
      return movePartition(plan, t, p, (next++).toString(), record);
    });
    moved.push({ ...t, partitions });
  }
  return { record, moved, next };
}

/**
 * Moves partition `p` of table `t` off the removed store to its new owner with segment `newSegmentId`,
 * listing it in `record`: as placed when it held no data yet (a CREATING table, or a replacement not
 * yet in use), else as lost.
 */
function movePartition(plan: StoreRemovalPlan, t: TableRecord, p: PartitionRecord, newSegmentId: string, record: RemovedStoreRecord): PartitionRecord {
  const newStoreId = plan.newOwners.get(partitionKey(t.scope, t.table, p.index));
  if (newStoreId === undefined) throw new Error(`the removal of ${plan.storeId} has no new store for ${partitionKey(t.scope, t.table, p.index)}`);
  const replacement: ReplacedPartitionRecord = {
    scope: t.scope,
    table: t.table,
    index: p.index,
    segmentId: p.segmentId,
    newSegmentId,
    newStoreId,
  };
  const partition = { index: p.index, segmentId: newSegmentId, storeId: newStoreId };
  if (t.state === 'CREATING') {
    record.placed.push(replacement);
    return partition;
  }
  // A replacement not yet in use held no data; the segment clients know stays in routing meanwhile.
  (p.replaces ? record.placed : record.lost).push(replacement);
  return { ...partition, replaces: p.replaces ?? { segmentId: p.segmentId, storeId: p.storeId } };
}
