// Original file: kvt/v1/segmentstore.proto


// Original file: kvt/v1/segmentstore.proto

export const _kvt_v1_Condition_Kind = {
  /**
   * unconditional
   */
  NONE: 'NONE',
  /**
   * the key must be absent
   */
  NOT_EXISTS: 'NOT_EXISTS',
  /**
   * the key's current version must equal (segment_id, sequence)
   */
  VERSION: 'VERSION',
} as const;

export type _kvt_v1_Condition_Kind =
  /**
   * unconditional
   */
  | 'NONE'
  | 0
  /**
   * the key must be absent
   */
  | 'NOT_EXISTS'
  | 1
  /**
   * the key's current version must equal (segment_id, sequence)
   */
  | 'VERSION'
  | 2

export type _kvt_v1_Condition_Kind__Output = typeof _kvt_v1_Condition_Kind[keyof typeof _kvt_v1_Condition_Kind]

/**
 * A condition on the current version of a key.
 */
export interface Condition {
  'kind'?: (_kvt_v1_Condition_Kind);
  /**
   * uint64
   */
  'segmentId'?: (string);
  /**
   * uint64
   */
  'sequence'?: (string);
}

/**
 * A condition on the current version of a key.
 */
export interface Condition__Output {
  'kind': (_kvt_v1_Condition_Kind__Output);
  /**
   * uint64
   */
  'segmentId': (string);
  /**
   * uint64
   */
  'sequence': (string);
}
