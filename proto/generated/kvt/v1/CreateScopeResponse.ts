// Original file: kvt/v1/controller.proto


export interface CreateScopeResponse {
  'created'?: (boolean);
}

export interface CreateScopeResponse__Output {
  'created': (boolean);
}
