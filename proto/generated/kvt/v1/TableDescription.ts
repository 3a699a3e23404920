// Original file: kvt/v1/controller.proto

import type { TableInfo as _kvt_v1_TableInfo, TableInfo__Output as _kvt_v1_TableInfo__Output } from '../../kvt/v1/TableInfo';
import type { Partition as _kvt_v1_Partition, Partition__Output as _kvt_v1_Partition__Output } from '../../kvt/v1/Partition';

export interface TableDescription {
  'table'?: (_kvt_v1_TableInfo | null);
  /**
   * as GetRouting would route them, liveness judged now
   */
  'partitions'?: (_kvt_v1_Partition)[];
}

export interface TableDescription__Output {
  'table': (_kvt_v1_TableInfo__Output | null);
  /**
   * as GetRouting would route them, liveness judged now
   */
  'partitions': (_kvt_v1_Partition__Output)[];
}
