// Original file: kvt/ops/v1/metrics.proto


export interface GetMetricsRequest {
  /**
   * Metric names, e.g. "kvt_segmentstore_operations_total"; at most 64.
   */
  'names'?: (string)[];
}

export interface GetMetricsRequest__Output {
  /**
   * Metric names, e.g. "kvt_segmentstore_operations_total"; at most 64.
   */
  'names': (string)[];
}
