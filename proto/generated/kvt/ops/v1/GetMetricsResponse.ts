// Original file: kvt/ops/v1/metrics.proto

import type { Metric as _kvt_ops_v1_Metric, Metric__Output as _kvt_ops_v1_Metric__Output } from '../../../kvt/ops/v1/Metric';

export interface GetMetricsResponse {
  'metrics'?: (_kvt_ops_v1_Metric)[];
}

export interface GetMetricsResponse__Output {
  'metrics': (_kvt_ops_v1_Metric__Output)[];
}
