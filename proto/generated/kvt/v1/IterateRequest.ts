// Original file: kvt/v1/segmentstore.proto


export interface IterateRequest {
  'segmentId'?: (string);
  'family'?: (string);
  'includeValues'?: (boolean);
  /**
   * 1..(server limit); 0 = default (10)
   */
  'maxItems'?: (number);
  /**
   * only keys starting with it
   */
  'prefix'?: (Buffer | Uint8Array | string);
  /**
   * inclusive lower bound ("" = open)
   */
  'from'?: (Buffer | Uint8Array | string);
  /**
   * upper bound ("" = open)
   */
  'to'?: (Buffer | Uint8Array | string);
  'toInclusive'?: (boolean);
  'reverse'?: (boolean);
  /**
   * resume: continue strictly after (or before, when reverse) `after`
   */
  'hasAfter'?: (boolean);
  /**
   * a key within prefix, from and to (the last of a page); else INVALID_ARGUMENT
   */
  'after'?: (Buffer | Uint8Array | string);
}

export interface IterateRequest__Output {
  'segmentId': (string);
  'family': (string);
  'includeValues': (boolean);
  /**
   * 1..(server limit); 0 = default (10)
   */
  'maxItems': (number);
  /**
   * only keys starting with it
   */
  'prefix': (Buffer);
  /**
   * inclusive lower bound ("" = open)
   */
  'from': (Buffer);
  /**
   * upper bound ("" = open)
   */
  'to': (Buffer);
  'toInclusive': (boolean);
  'reverse': (boolean);
  /**
   * resume: continue strictly after (or before, when reverse) `after`
   */
  'hasAfter': (boolean);
  /**
   * a key within prefix, from and to (the last of a page); else INVALID_ARGUMENT
   */
  'after': (Buffer);
}
