/**
 * A segment store's own metrics: the operations its engine ran (updates, gets, iterator pages, scans)
 * by outcome and their latency, whatever transport carried them (a unary call or a message of a
 * stream: per-RPC counts alone would show one ExecuteStream per client); its segments, entries and
 * bytes; its group commit and durable log. The operation counts are also what the controller's status
 * page turns into per-store rates (metrics-service.ts).
 */
import type { Counter, Gauge, Registry } from 'prom-client';
import { faultOf } from '../status';
import { CounterCell, FastCounter, FastHistogram, HistogramCell } from './fast-metrics';
import { COUNT_BUCKETS, counter, gauge, LATENCY_BUCKETS_SECONDS, secondsSince } from './metrics-registry';

/** The operations counted: one update (an atomic batch), one get (of one or more keys), one iterator page, one scan page. */
export const STORE_OPERATIONS = ['update', 'get', 'iterate', 'scan'] as const;
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

/** Name of the operations counter (the status page reads it from each store). */
export const OPERATIONS_METRIC = 'kvt_segmentstore_operations_total';

const HELD_BYTES_METRIC = 'kvt_segmentstore_durable_log_held_bytes';

/**
 * How long the scanned figures (segments, entries, bytes) are reused. Counting reads every entry of the
 * store (and applies its durable log first), so scrapes every few seconds must not each pay for it.
 */
export const DEFAULT_STATS_MAX_AGE_MS = 30_000;

/**
 * A count that took longer than this is not waited for by a scrape that has figures to give: it runs
 * in the background and the scrape answers the last figures (a store of a GB took over 10 s to count,
 * Prometheus's default scrape timeout). Counts are also spaced by ten times their own duration, so
 * that counting never takes more than a tenth of a store's time.
 */
const SLOW_COUNT_MS = 1_000;

/** A count of a store's segments, entries and bytes: when it ended and how long it took. */
interface Counted {
  at: number;
  tookMs: number;
  segments: number;
  entries: number;
  bytes: number;
}

/** A store's figures read when its metrics are scraped: what its engine exposes (by structural type). */
export interface StoreStatsSource {
  /** Every hosted segment with its live entries and bytes (a scan of each; the metrics cache it). */
  listSegments(): Promise<ReadonlyArray<{ entryCount: string; bytes: string }>>;
  /** Group-commit flushes and the record writes in them; applies of logged writes and the writes in them. */
  readonly commitStats: { flushes: number; ops: number; applies: number; appliedOps: number };
  /** Bytes of the durable log held by writes not yet applied, when the engine tells. */
  readonly durableLogHeldBytes?: number;
  /** The engine's caches (by name: `chunk`, `directory`), when it tells. */
  readonly cacheStats?: Readonly<Record<string, StoreCacheStats>>;
}

/** One cache of a store: its lookups that found their key and those that did not, since start; what it holds and may hold. */
export interface StoreCacheStats {
  hits: number;
  misses: number;
  bytes: number;
  entries: number;
  budgetBytes: number;
}

/** The engine methods observed, by structural type (server-kit does not import the store). */
export interface ObservableEngine {
  update(...args: never[]): Promise<unknown>;
  get(...args: never[]): Promise<unknown>;
  iterateInto(...args: never[]): Promise<unknown>;
  scan(...args: never[]): Promise<unknown>;
  withHeldCommits<T>(work: (update: (req: never) => Promise<unknown>) => T): T;
}

const METHOD_OPERATION: Readonly<Record<string, StoreOperation>> = { update: 'update', get: 'get', iterateInto: 'iterate', scan: 'scan' };

/**
 * The metrics of one segment store. Its `flushed`, `logWritten` and `applied` are what the storage
 * engine's observer is told (segmentstore/storage/storage-observer.ts; the store passes this object
 * as the engine's `observer`, which the compiler checks by shape: server-kit does not import storage).
 */
export class StoreMetrics {
  // On the path of every operation: fast-metrics.ts.
  private readonly operations: FastCounter;
  private readonly operationSeconds: FastHistogram;
  /** The OK series of each operation, looked up once. */
  private readonly ok = new Map<StoreOperation, { count: CounterCell; seconds: HistogramCell }>();
  /** What the engine reports as its observer: registered at its first report, so that no histogram sits at zero for an engine that reports nothing. */
  private observed: { flushUpdates: HistogramCell; flushBytes: HistogramCell; flushSeconds: HistogramCell; logWriteSeconds: HistogramCell; applyLagSeconds: HistogramCell } | undefined;
  private scanned: Counted | undefined;
  private scanning: Promise<void> | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly source: () => StoreStatsSource | undefined,
    private readonly statsMaxAgeMs = DEFAULT_STATS_MAX_AGE_MS,
    /** The clock counts are timed and spaced by. */
    private readonly clock: () => number = Date.now,
  ) {
    this.operations = new FastCounter(registry, OPERATIONS_METRIC, 'Operations the storage engine ran (an atomic update, a get, an iterator or scan page), by outcome code.', ['op', 'code']);
    this.operationSeconds = new FastHistogram(
      registry,
      'kvt_segmentstore_operation_seconds',
      'Time the storage engine took for an operation (an update until durable), by outcome code.',
      ['op', 'code'],
      LATENCY_BUCKETS_SECONDS,
    );
    for (const op of STORE_OPERATIONS) this.ok.set(op, { count: this.operations.series(op, 'OK'), seconds: this.operationSeconds.series(op, 'OK') });
    this.scannedGauges(registry);
    this.commitCounters(registry);
    this.cacheMetrics(registry);
    const engine = source();
    if (engine) this.heldBytesGauge(engine);
  }

  /**
   * The durable-log gauge, registered once an engine that tells how much of its log is held is seen
   * (here or by {@link observe}): for one that does not, a constant 0 would mislead.
   */
  private heldBytesGauge(engine: object): void {
    if (!('durableLogHeldBytes' in engine) || this.registry.getSingleMetric(HELD_BYTES_METRIC)) return;
    const source = this.source;
    gauge(this.registry, {
      name: HELD_BYTES_METRIC,
      help: 'Bytes of the durable log held by writes not yet applied to LevelDB.',
      collect: function () {
        this.set(source()?.durableLogHeldBytes ?? 0);
      },
    });
  }

  /** The StorageObserver histograms, registered at the first report. */
  private observedHistograms(): NonNullable<StoreMetrics['observed']> {
    if (!this.observed) {
      const histogram = (name: string, help: string, buckets: readonly number[]) => new FastHistogram(this.registry, name, help, [], buckets).series();
      this.observed = {
        flushUpdates: histogram('kvt_segmentstore_flush_updates', 'Updates made durable by one group-commit flush.', COUNT_BUCKETS),
        flushBytes: histogram(
          'kvt_segmentstore_flush_bytes',
          'Bytes written by one group-commit flush.',
          COUNT_BUCKETS.map((n) => n * 1024),
        ),
        flushSeconds: histogram('kvt_segmentstore_flush_seconds', 'Time one group-commit flush took to be durable.', LATENCY_BUCKETS_SECONDS),
        logWriteSeconds: histogram('kvt_segmentstore_log_write_seconds', 'Time one synced write of the durable log took.', LATENCY_BUCKETS_SECONDS),
        applyLagSeconds: histogram('kvt_segmentstore_apply_lag_seconds', 'How long the oldest write of an apply had waited in the durable log.', LATENCY_BUCKETS_SECONDS),
      };
    }
    return this.observed;
  }

  /** Counts one operation that ended with `err` (undefined: OK) after `start`. */
  record(op: StoreOperation, startMs: number, err?: unknown): void {
    if (err === undefined) {
      const series = this.ok.get(op)!;
      series.count.inc();
      series.seconds.observe(secondsSince(startMs));
      return;
    }
    const code = faultOf(err).code;
    this.operations.series(op, code).inc();
    this.operationSeconds.series(op, code).observe(secondsSince(startMs));
  }

  /** `engine` with its data operations counted (every other member is the engine's own). */
  observe<E extends ObservableEngine>(engine: E): E {
    this.heldBytesGauge(engine);
    const wrappers = new Map<PropertyKey, unknown>();
    // The method is looked up at each call, so that whatever replaced it on the engine since still runs.
    const methods = engine as unknown as Record<string, (...args: never[]) => Promise<unknown>>;
    const timed =
      (op: StoreOperation, method: string) =>
      (...args: never[]) =>
        this.timed(op, () => methods[method](...args));
    wrappers.set('withHeldCommits', (work: (update: (req: never) => Promise<unknown>) => unknown) => engine.withHeldCommits((update) => work((req: never) => this.timed('update', () => update(req)))));
    for (const [method, op] of Object.entries(METHOD_OPERATION)) wrappers.set(method, timed(op, method));
    return new Proxy(engine, {
      get(target, prop) {
        if (wrappers.has(prop)) return wrappers.get(prop);
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  private timed<T>(op: StoreOperation, run: () => Promise<T>): Promise<T> {
    const start = performance.now();
    let running: Promise<T>;
    try {
      running = run();
    } catch (err) {
      this.record(op, start, err);
      throw err;
    }
    return running.then(
      (value) => {
        this.record(op, start);
        return value;
      },
      (err: unknown) => {
        this.record(op, start, err ?? new Error('rejected'));
        throw err;
      },
    );
  }

  /** A group-commit flush was made durable: its updates, the bytes of its writes, its time until durable. */
  flushed(updates: number, bytes: number, seconds: number): void {
    const h = this.observedHistograms();
    h.flushUpdates.observe(updates);
    h.flushBytes.observe(bytes);
    h.flushSeconds.observe(seconds);
  }

  /** A record was written to the durable log, one synced write of `seconds`. */
  logWritten(_bytes: number, seconds: number): void {
    this.observedHistograms().logWriteSeconds.observe(seconds);
  }

  /** An apply put logged writes into LevelDB; the oldest had been durable for `lagSeconds`. */
  applied(_writes: number, lagSeconds: number): void {
    this.observedHistograms().applyLagSeconds.observe(lagSeconds);
  }

  /**
   * Segments, entries and bytes, scanned at most every `statsMaxAgeMs` and ten times the last scan's
   * duration (concurrent scrapes share one scan); a slow scan is not waited for when there are figures
   * (see SLOW_COUNT_MS).
   */
  private async scannedStats(): Promise<Counted | undefined> {
    const source = this.source();
    const last = this.scanned;
    if (!source) return last;
    if (!last || this.clock() - last.at >= Math.max(this.statsMaxAgeMs, 10 * last.tookMs)) {
      const started = this.clock();
      this.scanning ??= source
        .listSegments()
        .then((segments) => {
          let entries = 0;
          let bytes = 0;
          for (const s of segments) {
            entries += Number(s.entryCount);
            bytes += Number(s.bytes);
          }
          const at = this.clock();
          this.scanned = { at, tookMs: at - started, segments: segments.length, entries, bytes };
        })
        // A store that cannot read (stopping, failed) keeps its last figures.
        .catch(() => undefined)
        .finally(() => (this.scanning = undefined));
      if (!last || last.tookMs < SLOW_COUNT_MS) await this.scanning;
    }
    return this.scanned;
  }

  private scannedGauges(registry: Registry): void {
    const read = (pick: (s: Counted) => number) =>
      async function (this: { set(v: number): void }) {
        const stats = await scanned();
        if (stats) this.set(pick(stats));
      };
    const scanned = () => this.scannedStats();
    gauge(registry, { name: 'kvt_segmentstore_segments', help: 'Table segments hosted by this store.', collect: read((s) => s.segments) });
    gauge(registry, {
      name: 'kvt_segmentstore_entries',
      help: 'Live entries in the segments of this store (counted by reading them, at most every 30 s; see kvt_segmentstore_count_seconds).',
      collect: read((s) => s.entries),
    });
    gauge(registry, { name: 'kvt_segmentstore_bytes', help: 'Key and value bytes of the live entries of this store (counted with the entries).', collect: read((s) => s.bytes) });
    gauge(registry, {
      name: 'kvt_segmentstore_count_seconds',
      help: 'How long the last count of the entries and bytes took (counts are spaced by ten times as long, 30 s at least).',
      collect: read((s) => s.tookMs / 1000),
    });
  }

  /**
   * The engine's caches, read at each scrape: lookups by result (a hit ratio is hits / (hits + misses)
   * over a window), and the bytes and entries held against the budget. No series for an engine that
   * does not tell.
   */
  private cacheMetrics(registry: Registry): void {
    const source = this.source;
    counter(registry, {
      name: 'kvt_segmentstore_cache_lookups_total',
      help: "Lookups in a store's cache (chunk: key-family chunk records; directory: key-family directories), by result: hit or miss.",
      labelNames: ['cache', 'result'],
      collect: function (this: Counter<'cache' | 'result'>) {
        const caches = source()?.cacheStats;
        if (!caches) return;
        this.reset();
        for (const [cache, s] of Object.entries(caches)) {
          this.inc({ cache, result: 'hit' }, s.hits);
          this.inc({ cache, result: 'miss' }, s.misses);
        }
      },
    });
    const held = (name: string, help: string, pick: (s: StoreCacheStats) => number) =>
      gauge(registry, {
        name,
        help,
        labelNames: ['cache'],
        collect: function (this: Gauge<'cache'>) {
          const caches = source()?.cacheStats;
          if (!caches) return;
          for (const [cache, s] of Object.entries(caches)) this.set({ cache }, pick(s));
        },
      });
    held('kvt_segmentstore_cache_bytes', 'Bytes a cache of the store holds (as charged: records and their bookkeeping).', (s) => s.bytes);
    held('kvt_segmentstore_cache_budget_bytes', 'Bytes a cache of the store may hold (--chunk-cache-mb, --directory-cache-mb).', (s) => s.budgetBytes);
    held('kvt_segmentstore_cache_entries', 'Entries a cache of the store holds.', (s) => s.entries);
  }

  private commitCounters(registry: Registry): void {
    const fromStats = (name: string, help: string, pick: (s: StoreStatsSource['commitStats']) => number) =>
      counter(registry, {
        name,
        help,
        collect: (() => {
          const source = this.source;
          return function (this: Counter) {
            const stats = source()?.commitStats;
            if (!stats) return;
            this.reset();
            this.inc(pick(stats));
          };
        })(),
      });
    fromStats('kvt_segmentstore_group_commit_flushes_total', 'Group-commit flushes (each one durable write).', (s) => s.flushes);
    fromStats('kvt_segmentstore_group_commit_writes_total', 'LevelDB writes (puts and deletes of records) made durable by group-commit flushes; per flush: divide by the flushes.', (s) => s.ops);
    fromStats('kvt_segmentstore_log_applies_total', 'Applies of durable-log writes to LevelDB.', (s) => s.applies);
    fromStats('kvt_segmentstore_log_applied_writes_total', 'Writes applied to LevelDB from the durable log (the newest of each key per apply).', (s) => s.appliedOps);
  }
}
