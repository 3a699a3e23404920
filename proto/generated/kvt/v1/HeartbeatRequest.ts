// Original file: kvt/v1/controller.proto


export interface HeartbeatRequest {
  'storeId'?: (string);
  'address'?: (string);
}

export interface HeartbeatRequest__Output {
  'storeId': (string);
  'address': (string);
}
