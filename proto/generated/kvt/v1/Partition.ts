// Original file: kvt/v1/controller.proto


export interface Partition {
  'index'?: (number);
  /**
   * inclusive: partition i covers [i/n, (i+1)/n)
   */
  'hashLow'?: (number | string);
  /**
   * exclusive
   */
  'hashHigh'?: (number | string);
  /**
   * uint64
   */
  'segmentId'?: (string);
  'storeId'?: (string);
  /**
   * host:port of the owning store
   */
  'storeAddress'?: (string);
  'storeLive'?: (boolean);
}

export interface Partition__Output {
  'index': (number);
  /**
   * inclusive: partition i covers [i/n, (i+1)/n)
   */
  'hashLow': (number);
  /**
   * exclusive
   */
  'hashHigh': (number);
  /**
   * uint64
   */
  'segmentId': (string);
  'storeId': (string);
  /**
   * host:port of the owning store
   */
  'storeAddress': (string);
  'storeLive': (boolean);
}
