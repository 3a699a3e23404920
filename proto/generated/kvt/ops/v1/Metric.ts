// Original file: kvt/ops/v1/metrics.proto

import type { Sample as _kvt_ops_v1_Sample, Sample__Output as _kvt_ops_v1_Sample__Output } from '../../../kvt/ops/v1/Sample';

/**
 * One metric with all its series.
 */
export interface Metric {
  'name'?: (string);
  'help'?: (string);
  /**
   * "counter", "gauge", "histogram" or "summary".
   */
  'type'?: (string);
  /**
   * How the values of several processes combine ("sum", "first", …; prom-client's aggregator).
   */
  'aggregator'?: (string);
  'values'?: (_kvt_ops_v1_Sample)[];
}

/**
 * One metric with all its series.
 */
export interface Metric__Output {
  'name': (string);
  'help': (string);
  /**
   * "counter", "gauge", "histogram" or "summary".
   */
  'type': (string);
  /**
   * How the values of several processes combine ("sum", "first", …; prom-client's aggregator).
   */
  'aggregator': (string);
  'values': (_kvt_ops_v1_Sample__Output)[];
}
