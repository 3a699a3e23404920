// Original file: kvt/v1/controller.proto


export interface RemoveSegmentStoreRequest {
  'storeId'?: (string);
  /**
   * also when partitions of ACTIVE tables lose their data
   */
  'force'?: (boolean);
}

export interface RemoveSegmentStoreRequest__Output {
  'storeId': (string);
  /**
   * also when partitions of ACTIVE tables lose their data
   */
  'force': (boolean);
}
