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

/** `scope/table`: the identity of a table in maps, locks and logs. */
export function tableKey(scope: string, table: string): string {
  return `${scope}/${table}`;
}

/** Hash range of partition `index` of `count`: [index/count, (index+1)/count). */
export function hashRange(index: number, count: number): { low: number; high: number } {
  return { low: index / count, high: (index + 1) / count };
}
