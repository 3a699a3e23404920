// Original file: kvt/v1/controller.proto


export interface TableName {
  'scope'?: (string);
  'table'?: (string);
}

export interface TableName__Output {
  'scope': (string);
  'table': (string);
}
