// Original file: kvt/v1/segmentstore.proto

import type { Condition as _kvt_v1_Condition, Condition__Output as _kvt_v1_Condition__Output } from '../../kvt/v1/Condition';

// Original file: kvt/v1/segmentstore.proto

export const _kvt_v1_Modification_Type = {
  /**
   * upsert, optionally conditional
   */
  PUT: 'PUT',
  /**
   * insert; fails with BAD_KEY_VERSION when the key exists
   */
  INSERT: 'INSERT',
  /**
   * remove, optionally conditional; removing a missing key unconditionally succeeds
   */
  REMOVE: 'REMOVE',
  /**
   * remove every key of the family in [range_from, range_to) / with range_prefix
   */
  REMOVE_RANGE: 'REMOVE_RANGE',
} as const;

export type _kvt_v1_Modification_Type =
  /**
   * upsert, optionally conditional
   */
  | 'PUT'
  | 0
  /**
   * insert; fails with BAD_KEY_VERSION when the key exists
   */
  | 'INSERT'
  | 1
  /**
   * remove, optionally conditional; removing a missing key unconditionally succeeds
   */
  | 'REMOVE'
  | 2
  /**
   * remove every key of the family in [range_from, range_to) / with range_prefix
   */
  | 'REMOVE_RANGE'
  | 3

export type _kvt_v1_Modification_Type__Output = typeof _kvt_v1_Modification_Type[keyof typeof _kvt_v1_Modification_Type]

export interface Modification {
  'type'?: (_kvt_v1_Modification_Type);
  /**
   * "" = no key family
   */
  'family'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  'value'?: (Buffer | Uint8Array | string);
  'condition'?: (_kvt_v1_Condition | null);
  /**
   * uint64; "0" or "" = never expires
   */
  'ttlMs'?: (string);
  /**
   * REMOVE_RANGE only (the key field is unused); empty bounds are open.
   */
  'rangeFrom'?: (Buffer | Uint8Array | string);
  /**
   * exclusive
   */
  'rangeTo'?: (Buffer | Uint8Array | string);
  'rangePrefix'?: (Buffer | Uint8Array | string);
}

export interface Modification__Output {
  'type': (_kvt_v1_Modification_Type__Output);
  /**
   * "" = no key family
   */
  'family': (string);
  'key': (Buffer);
  'value': (Buffer);
  'condition': (_kvt_v1_Condition__Output | null);
  /**
   * uint64; "0" or "" = never expires
   */
  'ttlMs': (string);
  /**
   * REMOVE_RANGE only (the key field is unused); empty bounds are open.
   */
  'rangeFrom': (Buffer);
  /**
   * exclusive
   */
  'rangeTo': (Buffer);
  'rangePrefix': (Buffer);
}
