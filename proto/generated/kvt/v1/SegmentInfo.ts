// Original file: kvt/v1/segmentstore.proto


export interface SegmentInfo {
  'segmentId'?: (string);
  /**
   * uint64: live entries
   */
  'entryCount'?: (string);
  /**
   * uint64: key + value bytes of live entries
   */
  'bytes'?: (string);
  /**
   * uint64: the newest version sequence handed out
   */
  'lastSequence'?: (string);
  'table'?: (string);
}

export interface SegmentInfo__Output {
  'segmentId': (string);
  /**
   * uint64: live entries
   */
  'entryCount': (string);
  /**
   * uint64: key + value bytes of live entries
   */
  'bytes': (string);
  /**
   * uint64: the newest version sequence handed out
   */
  'lastSequence': (string);
  'table': (string);
}
