// Original file: kvt/v1/controller.proto


export interface RegisterSegmentStoreRequest {
  /**
   * stable identity kept in the store's data directory
   */
  'storeId'?: (string);
  /**
   * host:port clients and the controller reach it on
   */
  'address'?: (string);
}

export interface RegisterSegmentStoreRequest__Output {
  /**
   * stable identity kept in the store's data directory
   */
  'storeId': (string);
  /**
   * host:port clients and the controller reach it on
   */
  'address': (string);
}
