// Original file: kvt/v1/segmentstore.proto


export interface Entry {
  'found'?: (boolean);
  'key'?: (Buffer | Uint8Array | string);
  'value'?: (Buffer | Uint8Array | string);
  /**
   * uint64
   */
  'sequence'?: (string);
}

export interface Entry__Output {
  'found': (boolean);
  'key': (Buffer);
  'value': (Buffer);
  /**
   * uint64
   */
  'sequence': (string);
}
