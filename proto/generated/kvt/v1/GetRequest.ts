// Original file: kvt/v1/segmentstore.proto

import type { KeyRef as _kvt_v1_KeyRef, KeyRef__Output as _kvt_v1_KeyRef__Output } from '../../kvt/v1/KeyRef';

export interface GetRequest {
  'segmentId'?: (string);
  'keys'?: (_kvt_v1_KeyRef)[];
}

export interface GetRequest__Output {
  'segmentId': (string);
  'keys': (_kvt_v1_KeyRef__Output)[];
}
