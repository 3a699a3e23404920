// Original file: kvt/v1/segmentstore.proto


export interface CreateSegmentResponse {
  'created'?: (boolean);
}

export interface CreateSegmentResponse__Output {
  'created': (boolean);
}
