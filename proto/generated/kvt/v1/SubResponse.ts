// Original file: kvt/v1/segmentstore.proto

import type { UpdateResponse as _kvt_v1_UpdateResponse, UpdateResponse__Output as _kvt_v1_UpdateResponse__Output } from '../../kvt/v1/UpdateResponse';
import type { GetResponse as _kvt_v1_GetResponse, GetResponse__Output as _kvt_v1_GetResponse__Output } from '../../kvt/v1/GetResponse';
import type { Error as _kvt_v1_Error, Error__Output as _kvt_v1_Error__Output } from '../../kvt/v1/Error';
import type { IterateResponse as _kvt_v1_IterateResponse, IterateResponse__Output as _kvt_v1_IterateResponse__Output } from '../../kvt/v1/IterateResponse';

export interface SubResponse {
  'update'?: (_kvt_v1_UpdateResponse | null);
  'get'?: (_kvt_v1_GetResponse | null);
  'error'?: (_kvt_v1_Error | null);
  'iterate'?: (_kvt_v1_IterateResponse | null);
  'response'?: "update"|"get"|"error"|"iterate";
}

export interface SubResponse__Output {
  'update'?: (_kvt_v1_UpdateResponse__Output | null);
  'get'?: (_kvt_v1_GetResponse__Output | null);
  'error'?: (_kvt_v1_Error__Output | null);
  'iterate'?: (_kvt_v1_IterateResponse__Output | null);
  'response'?: "update"|"get"|"error"|"iterate";
}
