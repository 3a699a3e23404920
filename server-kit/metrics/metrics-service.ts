/**
 * `kvt.ops.v1.Metrics/Get`: some of a process's metrics, read over its gRPC port. The controller's
 * status page shows each store's operation rates; it reaches every store over gRPC already (with its
 * TLS and admin token), but does not know where a store serves its Prometheus endpoint, if it serves
 * one at all. The messages are JSON (prom-client's `get()` form), not protobuf: they are read only by
 * kvt's own status page, and carry nothing the wire contract of tables depends on.
 */
import * as grpc from '@grpc/grpc-js';
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import { invalidArgument } from '../fault';
import { unary } from '../status';

/** The request: which metrics (by name) to return; unknown names are left out. */
export interface MetricsRequest {
  names: string[];
}

/** The answer: each metric asked for that the process has. */
export interface MetricsResponse {
  metrics: MetricObjectWithValues<MetricValue<string>>[];
}

/** At most this many names in one request. */
const MAX_NAMES = 64;

const toJson = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
const fromJson = (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8'));

/** The path of the one method. */
export const METRICS_GET_PATH = '/kvt.ops.v1.Metrics/Get';

/** The service definition (JSON messages). */
export const METRICS_SERVICE: grpc.ServiceDefinition = {
  Get: {
    path: METRICS_GET_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: toJson,
    requestDeserialize: fromJson,
    responseSerialize: toJson,
    responseDeserialize: fromJson,
    originalName: 'get',
  },
};

/** The handlers of {@link METRICS_SERVICE} over `registry`. */
export function metricsHandlers(registry: Registry): grpc.UntypedServiceImplementation {
  return {
    Get: unary(async (req: MetricsRequest): Promise<MetricsResponse> => {
      const names = req?.names;
      if (!Array.isArray(names) || names.length > MAX_NAMES || !names.every((n) => typeof n === 'string')) {
        throw invalidArgument(`names must be an array of at most ${MAX_NAMES} metric names`);
      }
      const metrics = await Promise.all(names.map((name) => registry.getSingleMetric(name)?.get()));
      return { metrics: metrics.filter((m): m is MetricObjectWithValues<MetricValue<string>> => m !== undefined) };
    }),
  };
}

/** Asks the process behind `client` (any client on its channel) for the metrics `names`, by `deadline`. */
export function fetchMetrics(client: grpc.Client, names: string[], deadline: number): Promise<MetricsResponse> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest<MetricsRequest, MetricsResponse>(METRICS_GET_PATH, toJson, fromJson as (b: Buffer) => MetricsResponse, { names }, new grpc.Metadata(), { deadline }, (err, res) =>
      err ? reject(err) : resolve(res!),
    );
  });
}
