// Original file: kvt/ops/v1/metrics.proto


/**
 * One series of a metric and its value.
 */
export interface Sample {
  /**
   * For a histogram or summary, which of its series this is ("<name>_bucket", "<name>_sum",
   * "<name>_count"); empty for a counter or gauge.
   */
  'metricName'?: (string);
  /**
   * The series' labels; numbers (a bucket's "le") written as decimal strings.
   */
  'labels'?: ({[key: string]: string});
  'value'?: (number | string);
}

/**
 * One series of a metric and its value.
 */
export interface Sample__Output {
  /**
   * For a histogram or summary, which of its series this is ("<name>_bucket", "<name>_sum",
   * "<name>_count"); empty for a counter or gauge.
   */
  'metricName': (string);
  /**
   * The series' labels; numbers (a bucket's "le") written as decimal strings.
   */
  'labels': ({[key: string]: string});
  'value': (number);
}
