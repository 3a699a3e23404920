// Original file: kvt/v1/segmentstore.proto

import type { Entry as _kvt_v1_Entry, Entry__Output as _kvt_v1_Entry__Output } from '../../kvt/v1/Entry';

export interface GetResponse {
  /**
   * One per requested key, in request order; found=false when absent. Or fewer: the entries of the
   * first keys only, when the values of the rest would take the answer (with the other Gets of the same
   * Execute) past 32 MiB of keys and values, or, on an ExecuteStream, past what is left of the 64 MiB
   * of answers the stream may hold unsent; ask again for the keys left out. An answer holds at least
   * one entry unless other Gets of the same Execute answered some.
   */
  'entries'?: (_kvt_v1_Entry)[];
}

export interface GetResponse__Output {
  /**
   * One per requested key, in request order; found=false when absent. Or fewer: the entries of the
   * first keys only, when the values of the rest would take the answer (with the other Gets of the same
   * Execute) past 32 MiB of keys and values, or, on an ExecuteStream, past what is left of the 64 MiB
   * of answers the stream may hold unsent; ask again for the keys left out. An answer holds at least
   * one entry unless other Gets of the same Execute answered some.
   */
  'entries': (_kvt_v1_Entry__Output)[];
}
