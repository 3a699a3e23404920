// Original file: kvt/v1/controller.proto


export interface DeleteScopeResponse {
  'deleted'?: (boolean);
}

export interface DeleteScopeResponse__Output {
  'deleted': (boolean);
}
