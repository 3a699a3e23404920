/**
 * The Prometheus registry of one process (prom-client). Each process keeps its own registry, not
 * prom-client's global one, so that servers started in one process (tests, benchmarks) keep their
 * counts apart. The helpers return the metric already registered under a name, so that two parts
 * sharing a registry (two client factories given the same one) count into the same series.
 */
import { collectDefaultMetrics, Counter, CounterConfiguration, Gauge, GaugeConfiguration, Histogram, HistogramConfiguration, Registry } from 'prom-client';

/**
 * A new registry; with `processMetrics`, also Node's own metrics (CPU, memory, event-loop delay, GC:
 * `process_*` and `nodejs_*`), which a process collects only when it serves its metrics.
 */
export function newMetricsRegistry(processMetrics = false): Registry {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });
  return registry;
}

/** The counter `config.name` of `registry`, registered now if it is not yet. */
export function counter<T extends string>(registry: Registry, config: Omit<CounterConfiguration<T>, 'registers'>): Counter<T> {
  return (registry.getSingleMetric(config.name) as Counter<T> | undefined) ?? new Counter({ ...config, registers: [registry] });
}

/** The gauge `config.name` of `registry`, registered now if it is not yet. */
export function gauge<T extends string>(registry: Registry, config: Omit<GaugeConfiguration<T>, 'registers'>): Gauge<T> {
  return (registry.getSingleMetric(config.name) as Gauge<T> | undefined) ?? new Gauge({ ...config, registers: [registry] });
}

/** The histogram `config.name` of `registry`, registered now if it is not yet. */
export function histogram<T extends string>(registry: Registry, config: Omit<HistogramConfiguration<T>, 'registers'>): Histogram<T> {
  return (registry.getSingleMetric(config.name) as Histogram<T> | undefined) ?? new Histogram({ ...config, registers: [registry] });
}

/** Latency buckets in seconds, 100 µs to 10 s: a store acknowledges a durable write in about a millisecond. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Count buckets (items per call or per flush), powers of two up to 16,384. */
export const COUNT_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

/** Seconds since `startMs` (a `performance.now()` reading). */
export function secondsSince(startMs: number): number {
  return (performance.now() - startMs) / 1000;
}
