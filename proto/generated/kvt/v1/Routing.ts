// Original file: kvt/v1/controller.proto

import type { Partition as _kvt_v1_Partition, Partition__Output as _kvt_v1_Partition__Output } from '../../kvt/v1/Partition';

export interface Routing {
  'scope'?: (string);
  'table'?: (string);
  'partitionCount'?: (number);
  /**
   * uint64: changes whenever any partition's owner or address changes
   */
  'generation'?: (string);
  'partitions'?: (_kvt_v1_Partition)[];
}

export interface Routing__Output {
  'scope': (string);
  'table': (string);
  'partitionCount': (number);
  /**
   * uint64: changes whenever any partition's owner or address changes
   */
  'generation': (string);
  'partitions': (_kvt_v1_Partition__Output)[];
}
