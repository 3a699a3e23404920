/**
 * What the controller persists, one JSON value per LevelDB key. Segment ids are u64 decimal strings
 * handed out by a persisted counter and never reused, so a re-created table gets fresh segments.
 */
import type { TableState } from './table-state';

/** A scope: a namespace of tables. */
export interface ScopeRecord {
  name: string;
  createdAtMs: number;
}

/** One partition of a table: hash range [index/n, (index+1)/n), its segment and the owning store. */
export interface PartitionRecord {
  index: number;
  segmentId: string;
  storeId: string;
  /**
   * Set while the segment is a replacement not yet created on `storeId`, for a partition of an ACTIVE
   * table whose store was removed: routing keeps naming the old segment (on a dead store: callers get
   * UNAVAILABLE and retry) until the new one exists, then the field goes and the generation changes.
   */
  replaces?: { segmentId: string; storeId: string };
}

/** A key-value table with its placement. */
export interface TableRecord {
  scope: string;
  table: string;
  partitionCount: number;
  state: TableState;
  createdAtMs: number;
  partitions: PartitionRecord[];
}

/** A segment store the controller knows. Liveness is not stored: it follows from heartbeats. */
export interface StoreRecord {
  storeId: string;
  address: string;
  /** Controller clock, at the last persisted change (registration or address change). */
  lastHeartbeatMs: number;
}

/** A partition whose segment was on a removed store, and its new segment. */
export interface ReplacedPartitionRecord {
  scope: string;
  table: string;
  index: number;
  /** The segment on the removed store. */
  segmentId: string;
  newSegmentId: string;
  newStoreId: string;
}

/**
 * A segment store removed by an operator, kept for good: its id is refused from then on, and its
 * segments of tables being deleted count as deleted. Also the removal's report.
 */
export interface RemovedStoreRecord {
  storeId: string;
  /** Its last address. */
  address: string;
  removedAtMs: number;
  /** Partitions of ACTIVE tables whose data stayed on the store (a removal with force). */
  lost: ReplacedPartitionRecord[];
  /** Partitions that held no data yet: of CREATING tables, or replacements not yet in use. */
  placed: ReplacedPartitionRecord[];
  /** Tables being deleted that had segments on the store. */
  deleting: Array<{ scope: string; table: string }>;
}

/** `scope/table`: the identity of a table in maps, locks and logs. */
export function tableKey(scope: string, table: string): string {
  return `${scope}/${table}`;
}

/** `scope/table#index`: the identity of a partition in maps and logs. */
export function partitionKey(scope: string, table: string, index: number): string {
  return `${tableKey(scope, table)}#${index}`;
}

/** Hash range of partition `index` of `count`: [index/count, (index+1)/count). */
export function hashRange(index: number, count: number): { low: number; high: number } {
  return { low: index / count, high: (index + 1) / count };
}
