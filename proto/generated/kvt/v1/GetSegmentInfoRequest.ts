// Original file: kvt/v1/segmentstore.proto


export interface GetSegmentInfoRequest {
  'segmentId'?: (string);
}

export interface GetSegmentInfoRequest__Output {
  'segmentId': (string);
}
