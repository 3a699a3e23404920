// Original file: kvt/v1/segmentstore.proto

import type { Modification as _kvt_v1_Modification, Modification__Output as _kvt_v1_Modification__Output } from '../../kvt/v1/Modification';

export interface UpdateRequest {
  'segmentId'?: (string);
  'modifications'?: (_kvt_v1_Modification)[];
}

export interface UpdateRequest__Output {
  'segmentId': (string);
  'modifications': (_kvt_v1_Modification__Output)[];
}
