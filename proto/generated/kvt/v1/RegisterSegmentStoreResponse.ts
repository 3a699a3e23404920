// Original file: kvt/v1/controller.proto


export interface RegisterSegmentStoreResponse {
  'heartbeatIntervalMs'?: (number);
}

export interface RegisterSegmentStoreResponse__Output {
  'heartbeatIntervalMs': (number);
}
