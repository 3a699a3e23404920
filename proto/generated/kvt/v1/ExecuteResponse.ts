// Original file: kvt/v1/segmentstore.proto

import type { SubResponse as _kvt_v1_SubResponse, SubResponse__Output as _kvt_v1_SubResponse__Output } from '../../kvt/v1/SubResponse';

export interface ExecuteResponse {
  'responses'?: (_kvt_v1_SubResponse)[];
}

export interface ExecuteResponse__Output {
  'responses': (_kvt_v1_SubResponse__Output)[];
}
