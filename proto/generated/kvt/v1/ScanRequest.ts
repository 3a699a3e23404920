// Original file: kvt/v1/segmentstore.proto


export interface ScanRequest {
  'segmentId'?: (string);
  'includeValues'?: (boolean);
  /**
   * 1..(server limit); 0 = default (10)
   */
  'maxItems'?: (number);
  /**
   * `position` of the previous page; empty = from the start; one that does not decode as a
   * position -> INVALID_ARGUMENT
   */
  'after'?: (Buffer | Uint8Array | string);
}

export interface ScanRequest__Output {
  'segmentId': (string);
  'includeValues': (boolean);
  /**
   * 1..(server limit); 0 = default (10)
   */
  'maxItems': (number);
  /**
   * `position` of the previous page; empty = from the start; one that does not decode as a
   * position -> INVALID_ARGUMENT
   */
  'after': (Buffer);
}
