// Original file: kvt/v1/segmentstore.proto


export interface DeleteSegmentResponse {
  'deleted'?: (boolean);
}

export interface DeleteSegmentResponse__Output {
  'deleted': (boolean);
}
