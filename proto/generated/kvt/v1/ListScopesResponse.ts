// Original file: kvt/v1/controller.proto


export interface ListScopesResponse {
  'scopes'?: (string)[];
}

export interface ListScopesResponse__Output {
  'scopes': (string)[];
}
