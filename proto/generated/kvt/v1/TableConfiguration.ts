// Original file: kvt/v1/controller.proto


export interface TableConfiguration {
  'partitionCount'?: (number);
}

export interface TableConfiguration__Output {
  'partitionCount': (number);
}
