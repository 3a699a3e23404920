// Original file: kvt/v1/controller.proto


export interface ListTablesRequest {
  'scope'?: (string);
  /**
   * "" = from the start
   */
  'continuationToken'?: (string);
  /**
   * 0 = server default
   */
  'limit'?: (number);
}

export interface ListTablesRequest__Output {
  'scope': (string);
  /**
   * "" = from the start
   */
  'continuationToken': (string);
  /**
   * 0 = server default
   */
  'limit': (number);
}
