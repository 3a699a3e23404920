// Original file: kvt/v1/segmentstore.proto

import type { ScanItem as _kvt_v1_ScanItem, ScanItem__Output as _kvt_v1_ScanItem__Output } from '../../kvt/v1/ScanItem';

export interface ScanResponse {
  'items'?: (_kvt_v1_ScanItem)[];
  /**
   * true when no more items follow
   */
  'done'?: (boolean);
  /**
   * opaque: pass back as `after` for the next page
   */
  'position'?: (Buffer | Uint8Array | string);
}

export interface ScanResponse__Output {
  'items': (_kvt_v1_ScanItem__Output)[];
  /**
   * true when no more items follow
   */
  'done': (boolean);
  /**
   * opaque: pass back as `after` for the next page
   */
  'position': (Buffer);
}
