// Original file: kvt/v1/segmentstore.proto

import type { ExecuteRequest as _kvt_v1_ExecuteRequest, ExecuteRequest__Output as _kvt_v1_ExecuteRequest__Output } from '../../kvt/v1/ExecuteRequest';
import type { IterateRequest as _kvt_v1_IterateRequest, IterateRequest__Output as _kvt_v1_IterateRequest__Output } from '../../kvt/v1/IterateRequest';

export interface ExecuteStreamRequest {
  /**
   * picked by the client; echoed in the response
   */
  'id'?: (number);
  /**
   * an Execute …
   */
  'request'?: (_kvt_v1_ExecuteRequest | null);
  /**
   * … or, instead, one iterator page
   */
  'iterate'?: (_kvt_v1_IterateRequest | null);
}

export interface ExecuteStreamRequest__Output {
  /**
   * picked by the client; echoed in the response
   */
  'id': (number);
  /**
   * an Execute …
   */
  'request': (_kvt_v1_ExecuteRequest__Output | null);
  /**
   * … or, instead, one iterator page
   */
  'iterate': (_kvt_v1_IterateRequest__Output | null);
}
