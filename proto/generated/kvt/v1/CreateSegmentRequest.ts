// Original file: kvt/v1/segmentstore.proto


export interface CreateSegmentRequest {
  /**
   * uint64, assigned by the controller (or the caller when standalone)
   */
  'segmentId'?: (string);
  /**
   * "scope/table#partition", informational
   */
  'table'?: (string);
}

export interface CreateSegmentRequest__Output {
  /**
   * uint64, assigned by the controller (or the caller when standalone)
   */
  'segmentId': (string);
  /**
   * "scope/table#partition", informational
   */
  'table': (string);
}
