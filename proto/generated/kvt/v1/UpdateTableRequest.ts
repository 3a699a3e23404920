// Original file: kvt/v1/controller.proto

import type { TableConfiguration as _kvt_v1_TableConfiguration, TableConfiguration__Output as _kvt_v1_TableConfiguration__Output } from '../../kvt/v1/TableConfiguration';

export interface UpdateTableRequest {
  'scope'?: (string);
  'table'?: (string);
  'config'?: (_kvt_v1_TableConfiguration | null);
}

export interface UpdateTableRequest__Output {
  'scope': (string);
  'table': (string);
  'config': (_kvt_v1_TableConfiguration__Output | null);
}
