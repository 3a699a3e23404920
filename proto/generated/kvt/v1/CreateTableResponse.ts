// Original file: kvt/v1/controller.proto


export interface CreateTableResponse {
  'created'?: (boolean);
}

export interface CreateTableResponse__Output {
  'created': (boolean);
}
