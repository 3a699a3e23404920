// Original file: kvt/v1/segmentstore.proto


export interface UpdateResponse {
  /**
   * The earlier form, which stores no longer send (clients still read it): one sequence per
   * modification in request order, "" for removes.
   */
  'sequences'?: (string)[];
  /**
   * The new sequences of the update's PUT and INSERT modifications: the first one (in request order)
   * got `first_sequence`, the next one first_sequence + 1, and so on; removes get none. "" when the
   * update put and inserted nothing. The version of a result is (segment_id of the request, sequence).
   * (One number, not one per modification: a batch of 100 puts was answered with 100 decimal
   * strings that both ends built and parsed.)
   */
  'firstSequence'?: (string);
}

export interface UpdateResponse__Output {
  /**
   * The earlier form, which stores no longer send (clients still read it): one sequence per
   * modification in request order, "" for removes.
   */
  'sequences': (string)[];
  /**
   * The new sequences of the update's PUT and INSERT modifications: the first one (in request order)
   * got `first_sequence`, the next one first_sequence + 1, and so on; removes get none. "" when the
   * update put and inserted nothing. The version of a result is (segment_id of the request, sequence).
   * (One number, not one per modification: a batch of 100 puts was answered with 100 decimal
   * strings that both ends built and parsed.)
   */
  'firstSequence': (string);
}
