/**
 * `kvt.ops.v1.Metrics/Get` (proto/kvt/ops/v1/metrics.proto): some of a process's metrics, read over
 * its gRPC port. The controller's status page shows each store's operation rates; it reaches every
 * store over gRPC already (with its TLS and admin token), but does not know where a store serves its
 * Prometheus endpoint, if it serves one at all. A metric travels in prom-client's form (what
 * `Registry.getSingleMetric(name).get()` returns), its label values as strings.
 */
import * as grpc from '@grpc/grpc-js';
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import { metricsService } from '../../proto/load';
import type { GetMetricsRequest, GetMetricsRequestInput, GetMetricsResponse, Metric } from '../../proto/messages';
import { invalidArgument } from '../fault';
import { unary } from '../status';

/** The answer: each metric asked for that the process has. */
export type MetricsResponse = GetMetricsResponse;

/** At most this many names in one request. */
export const MAX_METRIC_NAMES = 64;

/** A metric as prom-client gives it, in its wire form: label values as strings (a bucket's `le` is a number there). */
function toWire(metric: MetricObjectWithValues<MetricValue<string>>): Metric {
  return {
    name: metric.name,
    help: metric.help,
    type: String(metric.type),
    aggregator: String(metric.aggregator),
    values: metric.values.map((v) => ({
      metricName: (v as { metricName?: string }).metricName ?? '',
      labels: Object.fromEntries(Object.entries(v.labels).map(([k, l]) => [k, String(l)])),
      value: v.value,
    })),
  };
}

/** The handlers of {@link metricsService} over `registry`. */
export function metricsHandlers(registry: Registry): grpc.UntypedServiceImplementation {
  return {
    Get: unary(async (req: GetMetricsRequest): Promise<MetricsResponse> => {
      if (req.names.length > MAX_METRIC_NAMES) throw invalidArgument(`names holds ${req.names.length} metric names; the maximum is ${MAX_METRIC_NAMES}`);
      const metrics = await Promise.all(req.names.map((name) => registry.getSingleMetric(name)?.get()));
      return { metrics: metrics.filter((m) => m !== undefined).map(toWire) };
    }),
  };
}

/** Asks the process behind `client` (any client on its channel) for the metrics `names`, by `deadline`. */
export function fetchMetrics(client: grpc.Client, names: string[], deadline: number): Promise<MetricsResponse> {
  const get = metricsService().Get;
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest<GetMetricsRequestInput, MetricsResponse>(get.path, get.requestSerialize, get.responseDeserialize, { names }, new grpc.Metadata(), { deadline }, (err, res) =>
      err ? reject(err) : resolve(res!),
    );
  });
}
