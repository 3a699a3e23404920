// Original file: kvt/v1/controller.proto


export interface SegmentStoreInfo {
  'storeId'?: (string);
  'address'?: (string);
  'live'?: (boolean);
  /**
   * uint64, controller clock
   */
  'lastHeartbeatMs'?: (string);
  'segmentCount'?: (number);
  /**
   * uint64: how long ago, by the controller's clock (after a controller restart: at most since the restart)
   */
  'lastHeartbeatAgeMs'?: (string);
}

export interface SegmentStoreInfo__Output {
  'storeId': (string);
  'address': (string);
  'live': (boolean);
  /**
   * uint64, controller clock
   */
  'lastHeartbeatMs': (string);
  'segmentCount': (number);
  /**
   * uint64: how long ago, by the controller's clock (after a controller restart: at most since the restart)
   */
  'lastHeartbeatAgeMs': (string);
}
