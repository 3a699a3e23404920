// Original file: kvt/v1/controller.proto


/**
 * A partition whose segment was on the removed store, and the one that replaces it.
 */
export interface ReplacedPartition {
  'scope'?: (string);
  'table'?: (string);
  'partition'?: (number);
  /**
   * uint64: the segment on the removed store
   */
  'segmentId'?: (string);
  /**
   * uint64: the new (empty) segment
   */
  'newSegmentId'?: (string);
  /**
   * the live store it was placed on
   */
  'newStoreId'?: (string);
}

/**
 * A partition whose segment was on the removed store, and the one that replaces it.
 */
export interface ReplacedPartition__Output {
  'scope': (string);
  'table': (string);
  'partition': (number);
  /**
   * uint64: the segment on the removed store
   */
  'segmentId': (string);
  /**
   * uint64: the new (empty) segment
   */
  'newSegmentId': (string);
  /**
   * the live store it was placed on
   */
  'newStoreId': (string);
}
