// Original file: kvt/v1/segmentstore.proto

import type { Entry as _kvt_v1_Entry, Entry__Output as _kvt_v1_Entry__Output } from '../../kvt/v1/Entry';

export interface IterateResponse {
  /**
   * found is always true
   */
  'items'?: (_kvt_v1_Entry)[];
  /**
   * true when no more items follow
   */
  'done'?: (boolean);
}

export interface IterateResponse__Output {
  /**
   * found is always true
   */
  'items': (_kvt_v1_Entry__Output)[];
  /**
   * true when no more items follow
   */
  'done': (boolean);
}
