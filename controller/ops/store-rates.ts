/**
 * Per-store figures for the status page, read from each live store's own metrics over gRPC
 * (`kvt.ops.v1.Metrics/Get`): operations per second by kind, from the growth of the store's
 * operation counters between samples, and its live entries and bytes. Sampled only while someone looks
 * (each status request refreshes, at most every `minIntervalMs`), never in the background.
 */
import { errorMessage } from '../../server-kit/fault';
import { OPERATIONS_METRIC, STORE_OPERATIONS } from '../../server-kit/metrics/store-metrics';
import type { MetricsResponse } from '../../server-kit/metrics/metrics-service';

/** What the status page shows of one store beside the controller's own view. */
export interface StoreFigures {
  /** Operations per second by kind (update, get, iterate, scan), once two samples are known. */
  opsPerSecond?: Record<string, number>;
  /** Operations run since the store started, by kind. */
  operations?: Record<string, number>;
  /** Live entries and their key + value bytes, as the store last counted them. */
  entries?: number;
  bytes?: number;
  /** Why the store could not be asked (the figures above are then the last known ones, without rates). */
  error?: string;
}

/** How the poller asks a store for metrics (SegmentStoreClients.metrics). */
export type MetricsSource = (address: string, names: string[], timeoutMs: number) => Promise<MetricsResponse>;

interface Sample {
  atMs: number;
  totals: Record<string, number>;
}

/** Rates are computed over the samples of this window (the oldest sample in it against the newest). */
const RATE_WINDOW_MS = 5_000;
const METRIC_NAMES = [OPERATIONS_METRIC, 'kvt_segmentstore_entries', 'kvt_segmentstore_bytes'];

/** Samples the live stores' metrics and turns them into {@link StoreFigures}. */
export class StoreRates {
  private readonly samples = new Map<string, Sample[]>();
  private readonly figures = new Map<string, StoreFigures>();
  private refreshing: Promise<void> | undefined;
  private lastRefreshMs = -Infinity;

  constructor(
    private readonly source: MetricsSource,
    private readonly minIntervalMs = 1_000,
    private readonly callTimeoutMs = 2_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The figures of a store, if it was ever sampled. */
  figuresOf(storeId: string): StoreFigures | undefined {
    return this.figures.get(storeId);
  }

  /** Samples every live store of `stores` unless that was done less than `minIntervalMs` ago (concurrent callers share one round). */
  refresh(stores: ReadonlyArray<{ storeId: string; address: string; live: boolean }>): Promise<void> {
    if (this.refreshing) return this.refreshing;
    if (this.clock() - this.lastRefreshMs < this.minIntervalMs) return Promise.resolve();
    this.lastRefreshMs = this.clock();
    this.refreshing = Promise.all(stores.map((s) => (s.live ? this.sample(s.storeId, s.address) : this.markDead(s.storeId)))).then(
      () => (this.refreshing = undefined),
      () => (this.refreshing = undefined),
    );
    return this.refreshing;
  }

  private markDead(storeId: string): void {
    const last = this.figures.get(storeId);
    this.samples.delete(storeId);
    if (last) this.figures.set(storeId, { ...last, opsPerSecond: undefined });
  }

  private async sample(storeId: string, address: string): Promise<void> {
    let response: MetricsResponse;
    try {
      response = await this.source(address, METRIC_NAMES, this.callTimeoutMs);
    } catch (err) {
      this.samples.delete(storeId);
      this.figures.set(storeId, { ...this.figures.get(storeId), opsPerSecond: undefined, error: errorMessage(err) });
      return;
    }
    const now = this.clock();
    const totals: Record<string, number> = Object.fromEntries(STORE_OPERATIONS.map((op) => [op, 0]));
    let entries: number | undefined;
    let bytes: number | undefined;
    for (const metric of response.metrics) {
      for (const v of metric.values) {
        if (metric.name === OPERATIONS_METRIC) totals[String(v.labels.op)] = (totals[String(v.labels.op)] ?? 0) + v.value;
        else if (metric.name === 'kvt_segmentstore_entries') entries = v.value;
        else if (metric.name === 'kvt_segmentstore_bytes') bytes = v.value;
      }
    }
    const history = (this.samples.get(storeId) ?? []).filter((s) => now - s.atMs <= RATE_WINDOW_MS);
    // A counter that went back means the store restarted: earlier samples say nothing about now.
    const usable = history.filter((s) => STORE_OPERATIONS.every((op) => s.totals[op] <= totals[op]));
    usable.push({ atMs: now, totals });
    this.samples.set(storeId, usable);
    const oldest = usable[0];
    const seconds = (now - oldest.atMs) / 1000;
    const opsPerSecond = seconds > 0 ? Object.fromEntries(STORE_OPERATIONS.map((op) => [op, (totals[op] - oldest.totals[op]) / seconds])) : undefined;
    this.figures.set(storeId, { opsPerSecond, operations: totals, entries, bytes });
  }
}
