// Original file: kvt/v1/controller.proto

import type { ReplacedPartition as _kvt_v1_ReplacedPartition, ReplacedPartition__Output as _kvt_v1_ReplacedPartition__Output } from '../../kvt/v1/ReplacedPartition';
import type { TableName as _kvt_v1_TableName, TableName__Output as _kvt_v1_TableName__Output } from '../../kvt/v1/TableName';

export interface RemoveSegmentStoreResponse {
  /**
   * false: removed before; the report is that removal's
   */
  'removed'?: (boolean);
  /**
   * the store's last address
   */
  'address'?: (string);
  /**
   * of ACTIVE tables: their data stayed on the store (force)
   */
  'lostPartitions'?: (_kvt_v1_ReplacedPartition)[];
  /**
   * held no data yet (table being created, or a replacement not yet in use)
   */
  'placedPartitions'?: (_kvt_v1_ReplacedPartition)[];
  /**
   * tables being deleted: their segments on the store count as deleted
   */
  'deletingTables'?: (_kvt_v1_TableName)[];
  /**
   * tables the controller is still completing (stores unreachable); it goes on
   */
  'unfinishedTables'?: (_kvt_v1_TableName)[];
}

export interface RemoveSegmentStoreResponse__Output {
  /**
   * false: removed before; the report is that removal's
   */
  'removed': (boolean);
  /**
   * the store's last address
   */
  'address': (string);
  /**
   * of ACTIVE tables: their data stayed on the store (force)
   */
  'lostPartitions': (_kvt_v1_ReplacedPartition__Output)[];
  /**
   * held no data yet (table being created, or a replacement not yet in use)
   */
  'placedPartitions': (_kvt_v1_ReplacedPartition__Output)[];
  /**
   * tables being deleted: their segments on the store count as deleted
   */
  'deletingTables': (_kvt_v1_TableName__Output)[];
  /**
   * tables the controller is still completing (stores unreachable); it goes on
   */
  'unfinishedTables': (_kvt_v1_TableName__Output)[];
}
