// Original file: kvt/v1/controller.proto


export interface TableRequest {
  'scope'?: (string);
  'table'?: (string);
}

export interface TableRequest__Output {
  'scope': (string);
  'table': (string);
}
