// Original file: kvt/v1/controller.proto


export interface DeleteTableResponse {
  'deleted'?: (boolean);
}

export interface DeleteTableResponse__Output {
  'deleted': (boolean);
}
