// Original file: kvt/v1/segmentstore.proto

import type { ExecuteResponse as _kvt_v1_ExecuteResponse, ExecuteResponse__Output as _kvt_v1_ExecuteResponse__Output } from '../../kvt/v1/ExecuteResponse';
import type { Error as _kvt_v1_Error, Error__Output as _kvt_v1_Error__Output } from '../../kvt/v1/Error';
import type { IterateResponse as _kvt_v1_IterateResponse, IterateResponse__Output as _kvt_v1_IterateResponse__Output } from '../../kvt/v1/IterateResponse';

export interface ExecuteStreamResponse {
  'id'?: (number);
  /**
   * the Execute ran (its sub-responses may still hold errors)
   */
  'response'?: (_kvt_v1_ExecuteResponse | null);
  /**
   * Instead of an answer: the request failed as a whole (an Iterate's error, a stopping store, a
   * message with neither request).
   */
  'error'?: (_kvt_v1_Error | null);
  /**
   * the page of an Iterate
   */
  'iterate'?: (_kvt_v1_IterateResponse | null);
}

export interface ExecuteStreamResponse__Output {
  'id': (number);
  /**
   * the Execute ran (its sub-responses may still hold errors)
   */
  'response': (_kvt_v1_ExecuteResponse__Output | null);
  /**
   * Instead of an answer: the request failed as a whole (an Iterate's error, a stopping store, a
   * message with neither request).
   */
  'error': (_kvt_v1_Error__Output | null);
  /**
   * the page of an Iterate
   */
  'iterate': (_kvt_v1_IterateResponse__Output | null);
}
