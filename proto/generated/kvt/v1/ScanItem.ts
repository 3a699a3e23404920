// Original file: kvt/v1/segmentstore.proto


export interface ScanItem {
  /**
   * "" = no key family
   */
  'family'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  'value'?: (Buffer | Uint8Array | string);
  /**
   * uint64
   */
  'sequence'?: (string);
}

export interface ScanItem__Output {
  /**
   * "" = no key family
   */
  'family': (string);
  'key': (Buffer);
  'value': (Buffer);
  /**
   * uint64
   */
  'sequence': (string);
}
