// Original file: kvt/v1/segmentstore.proto


export interface DeleteSegmentRequest {
  'segmentId'?: (string);
}

export interface DeleteSegmentRequest__Output {
  'segmentId': (string);
}
