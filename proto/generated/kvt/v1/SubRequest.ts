// Original file: kvt/v1/segmentstore.proto

import type { UpdateRequest as _kvt_v1_UpdateRequest, UpdateRequest__Output as _kvt_v1_UpdateRequest__Output } from '../../kvt/v1/UpdateRequest';
import type { GetRequest as _kvt_v1_GetRequest, GetRequest__Output as _kvt_v1_GetRequest__Output } from '../../kvt/v1/GetRequest';

export interface SubRequest {
  'update'?: (_kvt_v1_UpdateRequest | null);
  'get'?: (_kvt_v1_GetRequest | null);
  'request'?: "update"|"get";
}

export interface SubRequest__Output {
  'update'?: (_kvt_v1_UpdateRequest__Output | null);
  'get'?: (_kvt_v1_GetRequest__Output | null);
  'request'?: "update"|"get";
}
