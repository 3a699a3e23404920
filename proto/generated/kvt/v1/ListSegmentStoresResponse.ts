// Original file: kvt/v1/controller.proto

import type { SegmentStoreInfo as _kvt_v1_SegmentStoreInfo, SegmentStoreInfo__Output as _kvt_v1_SegmentStoreInfo__Output } from '../../kvt/v1/SegmentStoreInfo';

export interface ListSegmentStoresResponse {
  'stores'?: (_kvt_v1_SegmentStoreInfo)[];
}

export interface ListSegmentStoresResponse__Output {
  'stores': (_kvt_v1_SegmentStoreInfo__Output)[];
}
