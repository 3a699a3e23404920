// Original file: kvt/v1/controller.proto


export interface ScopeRequest {
  'scope'?: (string);
}

export interface ScopeRequest__Output {
  'scope': (string);
}
