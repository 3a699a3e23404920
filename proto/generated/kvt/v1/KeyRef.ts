// Original file: kvt/v1/segmentstore.proto


export interface KeyRef {
  'family'?: (string);
  'key'?: (Buffer | Uint8Array | string);
}

export interface KeyRef__Output {
  'family': (string);
  'key': (Buffer);
}
