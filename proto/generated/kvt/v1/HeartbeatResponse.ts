// Original file: kvt/v1/controller.proto


export interface HeartbeatResponse {
  /**
   * false: the controller does not know this store (or not at this address); register again
   */
  'known'?: (boolean);
  /**
   * the interval to keep to from now on (a restarted controller may ask another); 0: unchanged
   */
  'heartbeatIntervalMs'?: (number);
}

export interface HeartbeatResponse__Output {
  /**
   * false: the controller does not know this store (or not at this address); register again
   */
  'known': (boolean);
  /**
   * the interval to keep to from now on (a restarted controller may ask another); 0: unchanged
   */
  'heartbeatIntervalMs': (number);
}
