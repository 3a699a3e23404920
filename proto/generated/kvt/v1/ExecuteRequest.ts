// Original file: kvt/v1/segmentstore.proto

import type { SubRequest as _kvt_v1_SubRequest, SubRequest__Output as _kvt_v1_SubRequest__Output } from '../../kvt/v1/SubRequest';

export interface ExecuteRequest {
  'requests'?: (_kvt_v1_SubRequest)[];
}

export interface ExecuteRequest__Output {
  'requests': (_kvt_v1_SubRequest__Output)[];
}
