// Original file: kvt/v1/segmentstore.proto

import type { SegmentInfo as _kvt_v1_SegmentInfo, SegmentInfo__Output as _kvt_v1_SegmentInfo__Output } from '../../kvt/v1/SegmentInfo';

export interface ListSegmentsResponse {
  'segments'?: (_kvt_v1_SegmentInfo)[];
}

export interface ListSegmentsResponse__Output {
  'segments': (_kvt_v1_SegmentInfo__Output)[];
}
