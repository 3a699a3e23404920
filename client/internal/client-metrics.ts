/**
 * The client's metrics, kept only in a prom-client `Registry` the application passes (option
 * `metrics`): how the coalescer packs operations into Execute calls (sub-requests per call), and the
 * errors table operations end with, by code. Without a registry nothing is counted and prom-client is
 * not loaded. Factories given the same registry count into the same series.
 */
import type { Counter, Histogram, Registry } from 'prom-client';

/** What the client reports. */
export interface ClientMetrics {
  /** One Execute call (a unary call or a stream message) sent with `subRequests` sub-requests carrying `operations` operations. */
  executeCall(subRequests: number, operations: number): void;
  /** A table operation ended with the error `code` (after its retries). */
  error(code: string): void;
}

/** Counts nothing. */
export const NO_CLIENT_METRICS: ClientMetrics = { executeCall: () => undefined, error: () => undefined };

/** Sub-requests per call: powers of two up to the most a call carries by default (512) and past it. */
const PER_CALL_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096];

/** The metrics in `registry`, or {@link NO_CLIENT_METRICS} without one. */
export function clientMetrics(registry: Registry | undefined): ClientMetrics {
  if (!registry) return NO_CLIENT_METRICS;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const prom = require('prom-client') as typeof import('prom-client');
  const existing = <M>(name: string): M | undefined => registry.getSingleMetric(name) as M | undefined;
  const calls =
    existing<Counter>('kvt_client_execute_calls_total') ??
    new prom.Counter({ name: 'kvt_client_execute_calls_total', help: 'Execute calls sent to segment stores (unary calls or stream messages).', registers: [registry] });
  const operations =
    existing<Counter>('kvt_client_operations_total') ?? new prom.Counter({ name: 'kvt_client_operations_total', help: 'Table operations carried by Execute calls.', registers: [registry] });
  const perCall =
    existing<Histogram>('kvt_client_subrequests_per_call') ??
    new prom.Histogram({
      name: 'kvt_client_subrequests_per_call',
      help: 'Sub-requests per Execute call: how well concurrent operations were coalesced.',
      buckets: PER_CALL_BUCKETS,
      registers: [registry],
    });
  const errors =
    existing<Counter<'code'>>('kvt_client_errors_total') ??
    new prom.Counter({ name: 'kvt_client_errors_total', help: 'Table operations that ended in an error, by kvt error code.', labelNames: ['code'], registers: [registry] });
  return {
    executeCall(subRequests, ops) {
      calls.inc();
      operations.inc(ops);
      perCall.observe(subRequests);
    },
    error(code) {
      errors.inc({ code });
    },
  };
}
