// Original file: kvt/v1/segmentstore.proto


export interface Error {
  /**
   * proto/error-codes.ts
   */
  'code'?: (string);
  'message'?: (string);
  /**
   * index of the offending modification / key, -1 when none
   */
  'index'?: (number);
  'segmentId'?: (string);
}

export interface Error__Output {
  /**
   * proto/error-codes.ts
   */
  'code': (string);
  'message': (string);
  /**
   * index of the offending modification / key, -1 when none
   */
  'index': (number);
  'segmentId': (string);
}
