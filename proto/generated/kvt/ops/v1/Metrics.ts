// Original file: kvt/ops/v1/metrics.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { GetMetricsRequest as _kvt_ops_v1_GetMetricsRequest, GetMetricsRequest__Output as _kvt_ops_v1_GetMetricsRequest__Output } from '../../../kvt/ops/v1/GetMetricsRequest';
import type { GetMetricsResponse as _kvt_ops_v1_GetMetricsResponse, GetMetricsResponse__Output as _kvt_ops_v1_GetMetricsResponse__Output } from '../../../kvt/ops/v1/GetMetricsResponse';

export interface MetricsDefinition {
  Get: MethodDefinition<_kvt_ops_v1_GetMetricsRequest, _kvt_ops_v1_GetMetricsResponse, _kvt_ops_v1_GetMetricsRequest__Output, _kvt_ops_v1_GetMetricsResponse__Output>
}
