// Original file: kvt/v1/segmentstore.proto

import type { UpdateRequest as _kvt_v1_UpdateRequest, UpdateRequest__Output as _kvt_v1_UpdateRequest__Output } from '../../kvt/v1/UpdateRequest';
import type { GetRequest as _kvt_v1_GetRequest, GetRequest__Output as _kvt_v1_GetRequest__Output } from '../../kvt/v1/GetRequest';
import type { IterateRequest as _kvt_v1_IterateRequest, IterateRequest__Output as _kvt_v1_IterateRequest__Output } from '../../kvt/v1/IterateRequest';

export interface SubRequest {
  'update'?: (_kvt_v1_UpdateRequest | null);
  'get'?: (_kvt_v1_GetRequest | null);
  /**
   * One iterator page, as the Iterate call reads it: pages of concurrent iterators travel together
   * with gets and updates. The pages of one Execute hold at most 2 MiB of keys and values each.
   */
  'iterate'?: (_kvt_v1_IterateRequest | null);
  'request'?: "update"|"get"|"iterate";
}

export interface SubRequest__Output {
  'update'?: (_kvt_v1_UpdateRequest__Output | null);
  'get'?: (_kvt_v1_GetRequest__Output | null);
  /**
   * One iterator page, as the Iterate call reads it: pages of concurrent iterators travel together
   * with gets and updates. The pages of one Execute hold at most 2 MiB of keys and values each.
   */
  'iterate'?: (_kvt_v1_IterateRequest__Output | null);
  'request'?: "update"|"get"|"iterate";
}
