// Original file: kvt/v1/controller.proto


export interface ListTablesResponse {
  'tables'?: (string)[];
  /**
   * "" = no more
   */
  'continuationToken'?: (string);
}

export interface ListTablesResponse__Output {
  'tables': (string)[];
  /**
   * "" = no more
   */
  'continuationToken': (string);
}
