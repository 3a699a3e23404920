/**
 * The metrics parts one by one, each on real things: the RPC interceptor and the metrics service on a
 * real gRPC server, the store's operation counters on a real storage engine, the Prometheus endpoint
 * over HTTP, the client's `metrics` option, and the port flags.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Histogram, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, KeyValueTableFactory } from '../../client';
import { loadConfig as loadControllerConfig } from '../../controller/config';
import { loadConfig as loadSegmentStoreConfig } from '../../segmentstore/config';
import { SegmentEngine } from '../../segmentstore/storage/segment-engine';
import { checkDistinctPorts, UsageError } from '../../server-kit/flags';
import { healthClient, ProcessHealth } from '../../server-kit/health';
import { bindGrpcServer, newGrpcServer } from '../../server-kit/grpc-server';
import { FastCounter, FastHistogram } from '../../server-kit/metrics/fast-metrics';
import { newMetricsRegistry } from '../../server-kit/metrics/metrics-registry';
import { startMetricsServer } from '../../server-kit/metrics/metrics-server';
import { metricsService } from '../../proto/load';
import { fetchMetrics, metricsHandlers } from '../../server-kit/metrics/metrics-service';
import { RpcMetrics } from '../../server-kit/metrics/rpc-metrics';
import { StoreMetrics } from '../../server-kit/metrics/store-metrics';

/** The value of one series of `name` in `registry` (0 when absent). */
async function valueOf(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const series = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l) && (v as { metricName?: string }).metricName === undefined);
  return series?.value ?? 0;
}

/** The `_sum` of a histogram's series. */
async function sumOf(registry: Registry, name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => (v as { metricName?: string }).metricName === `${name}_sum`)?.value ?? 0;
}

/** The `_count` of a histogram's series. */
async function countOf(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const series = metric?.values.find((v) => (v as { metricName?: string }).metricName === `${name}_count` && Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return series?.value ?? 0;
}

describe('RpcMetrics (a server interceptor) and the metrics service, on a real gRPC server', () => {
  const registry = newMetricsRegistry();
  const health = new ProcessHealth('kvt.test.Service');
  let server: grpc.Server;
  let address: string;

  beforeAll(async () => {
    server = newGrpcServer({ interceptors: [new RpcMetrics(registry).interceptor] });
    health.addTo(server);
    server.addService(metricsService(), metricsHandlers(registry));
    address = `127.0.0.1:${await bindGrpcServer(server, '127.0.0.1', 0)}`;
    health.serving();
  });
  afterAll(() => {
    health.close();
    server.forceShutdown();
  });

  it('counts calls started and handled by method and code, with their time and messages', async () => {
    const client = healthClient(address);
    try {
      const check = (service: string) => new Promise<grpc.ServiceError | null>((resolve) => client.Check({ service }, { deadline: Date.now() + 5000 }, (err) => resolve(err)));
      for (let i = 0; i < 3; i++) expect(await check('')).toBeNull();
      expect((await check('no.such.Service'))?.code).toBe(grpc.status.NOT_FOUND);
    } finally {
      client.close();
    }
    const check = { grpc_service: 'grpc.health.v1.Health', grpc_method: 'Check', grpc_type: 'unary' };
    expect(await valueOf(registry, 'grpc_server_started_total', check)).toBe(4);
    expect(await valueOf(registry, 'grpc_server_handled_total', { ...check, grpc_code: 'OK' })).toBe(3);
    expect(await valueOf(registry, 'grpc_server_handled_total', { ...check, grpc_code: 'NOT_FOUND' })).toBe(1);
    expect(await countOf(registry, 'grpc_server_handling_seconds', { ...check, grpc_code: 'OK' })).toBe(3);
    expect(await valueOf(registry, 'grpc_server_msg_received_total', check)).toBe(4);
    expect(await valueOf(registry, 'grpc_server_msg_sent_total', check)).toBe(3);
    // Each call counted handled once, by its own code: grpc-js also tells the interceptor that an answered call ended.
    const handled = (await registry.getSingleMetric('grpc_server_handled_total')!.get()).values.filter((v) => v.labels.grpc_method === 'Check');
    expect(handled.map((v) => [v.labels.grpc_code, v.value])).toEqual([
      ['OK', 3],
      ['NOT_FOUND', 1],
    ]);
  });

  it('counts a stream the client cancels as CANCELLED, with each message it was sent', async () => {
    const client = healthClient(address);
    const watch = client.Watch({ service: '' });
    const first = await new Promise((resolve) => watch.once('data', resolve));
    expect(first).toEqual({ status: 'SERVING' });
    const ended = new Promise((resolve) => watch.on('error', resolve));
    watch.cancel();
    await ended;
    client.close();
    const labels = { grpc_service: 'grpc.health.v1.Health', grpc_method: 'Watch', grpc_type: 'server_stream' };
    await expect.poll(() => valueOf(registry, 'grpc_server_handled_total', { ...labels, grpc_code: 'CANCELLED' }), { timeout: 10_000 }).toBe(1);
    expect(await valueOf(registry, 'grpc_server_msg_sent_total', labels)).toBe(1);
  });

  it('answers kvt.ops.v1.Metrics/Get (proto/kvt/ops/v1/metrics.proto) with the metrics asked for, in prom-client form', async () => {
    expect(metricsService().Get.path).toBe('/kvt.ops.v1.Metrics/Get');
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    try {
      const sizes = new Histogram({ name: 'test_sizes', help: 'Sizes.', labelNames: ['op'], buckets: [1, 10], registers: [registry] });
      sizes.observe({ op: 'put' }, 5);
      sizes.observe({ op: 'put' }, 50);
      const answer = await fetchMetrics(client, ['test_sizes', 'no_such_metric', 'grpc_server_started_total'], Date.now() + 5000);
      expect(answer.metrics.map((m) => m.name)).toEqual(['test_sizes', 'grpc_server_started_total']);
      const [histogram, counter] = answer.metrics;
      expect(counter).toMatchObject({ type: 'counter', help: 'RPCs started on the server.', aggregator: 'sum' });
      // prom-client's form: a histogram's series named by their suffix; label values as strings (`le` is a number there).
      const series = (metricName: string, labels: Record<string, string>, value: number) => ({ metricName, labels, value });
      expect(histogram).toEqual({
        name: 'test_sizes',
        help: 'Sizes.',
        type: 'histogram',
        aggregator: 'sum',
        values: [
          series('test_sizes_bucket', { le: '1', op: 'put' }, 0),
          series('test_sizes_bucket', { le: '10', op: 'put' }, 1),
          series('test_sizes_bucket', { le: '+Inf', op: 'put' }, 2),
          series('test_sizes_sum', { op: 'put' }, 55),
          series('test_sizes_count', { op: 'put' }, 2),
        ],
      });
    } finally {
      client.close();
    }
  });

  it('refuses more than 64 names, and bytes that are not a GetMetricsRequest, with INVALID_ARGUMENT', async () => {
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    try {
      const tooMany = await fetchMetrics(
        client,
        Array.from({ length: 65 }, (_, i) => `m${i}`),
        Date.now() + 5000,
      ).catch((err: grpc.ServiceError) => err);
      expect(tooMany).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: 'names holds 65 metric names; the maximum is 64' });
      const garbage = await new Promise<grpc.ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          '/kvt.ops.v1.Metrics/Get',
          (v: Buffer) => v,
          (b: Buffer) => b,
          // What the JSON form this service once took looks like as bytes.
          Buffer.from(JSON.stringify({ names: ['all'] })),
          { deadline: Date.now() + 5000 },
          (err) => resolve(err),
        ),
      );
      expect(garbage?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(garbage?.details).toMatch(/^request is not a valid kvt\.ops\.v1\.Metrics\/Get message: /);
    } finally {
      client.close();
    }
  });
});

describe('StoreMetrics on a real storage engine', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-ops-engine-'));
  let engine: SegmentEngine;
  afterAll(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('counts each operation the service runs through the engine by kind and outcome, and reads the figures the engine exposes', async () => {
    engine = await SegmentEngine.open(path.join(dir, 'leveldb'), { expirySweepIntervalMs: 0 });
    const registry = newMetricsRegistry();
    const metrics = new StoreMetrics(registry, () => engine, 0);
    const observed = metrics.observe(engine);
    await observed.createSegment('7', 's/t#0');
    const put = (key: string, condition?: { kind: string; segmentId?: string; sequence?: string }) =>
      observed.update({ segmentId: '7', modifications: [{ family: 'f', key: Buffer.from(key), value: Buffer.from(`v-${key}`), condition }] });
    for (let i = 0; i < 5; i++) await put(`k${i}`);
    // Two updates of one Execute, through the held group commit.
    await observed.withHeldCommits((update) =>
      Promise.all([update({ segmentId: '7', modifications: [{ family: 'g', key: Buffer.from('a'), value: Buffer.from('1') }] }), update({ segmentId: '7', modifications: [] })]),
    );
    await expect(put('k0', { kind: 'NOT_EXISTS' })).rejects.toMatchObject({ code: 'BAD_KEY_VERSION' });
    await expect(observed.update({ segmentId: '99', modifications: [] })).rejects.toMatchObject({ code: 'SEGMENT_NOT_FOUND' });
    for (let i = 0; i < 3; i++) await observed.get({ segmentId: '7', keys: [{ family: 'f', key: Buffer.from(`k${i}`) }] });
    await observed.scan({ segmentId: '7', maxItems: 10, includeValues: false });

    const ops = 'kvt_segmentstore_operations_total';
    expect(await valueOf(registry, ops, { op: 'update', code: 'OK' })).toBe(7);
    expect(await valueOf(registry, ops, { op: 'update', code: 'BAD_KEY_VERSION' })).toBe(1);
    expect(await valueOf(registry, ops, { op: 'update', code: 'SEGMENT_NOT_FOUND' })).toBe(1);
    expect(await valueOf(registry, ops, { op: 'get', code: 'OK' })).toBe(3);
    expect(await valueOf(registry, ops, { op: 'scan', code: 'OK' })).toBe(1);
    expect(await countOf(registry, 'kvt_segmentstore_operation_seconds', { op: 'update', code: 'OK' })).toBe(7);
    // Everything else is the engine's own.
    expect(observed.state).toBe('open');
    expect((await observed.listSegments()).map((s) => s.segmentId)).toEqual(['7']);

    expect(await valueOf(registry, 'kvt_segmentstore_segments')).toBe(1);
    expect(await valueOf(registry, 'kvt_segmentstore_entries')).toBe(6);
    expect(await valueOf(registry, 'kvt_segmentstore_bytes')).toBe(5 * (2 + 4) + 2);
    const stats = engine.commitStats;
    expect(stats.flushes).toBeGreaterThan(0);
    expect(await valueOf(registry, 'kvt_segmentstore_group_commit_flushes_total')).toBe(stats.flushes);
    expect(await valueOf(registry, 'kvt_segmentstore_group_commit_writes_total')).toBe(stats.ops);
  });

  it("is the engine's observer: every flush with its updates, every synced log write, every apply, and the log bytes held until applied", async () => {
    const registry = newMetricsRegistry();
    // The metrics exist before the engine they observe (as in the segment store).
    const opened: { engine?: SegmentEngine } = {};
    const metrics = new StoreMetrics(registry, () => opened.engine, 0);
    // Applies only when a reader needs one (the timer is a minute away, the log far from a quarter full).
    const engine = await SegmentEngine.open(path.join(dir, 'observed'), { expirySweepIntervalMs: 0, logApplyMs: 60_000, observer: metrics });
    opened.engine = engine;
    try {
      const observed = metrics.observe(engine);
      await observed.createSegment('3', 's/t#0');
      const put = (family: string, key: string, condition?: { kind: string }) =>
        observed.update({ segmentId: '3', modifications: [{ family, key: Buffer.from(key), value: Buffer.from('v'), condition }] });
      // 5 updates one at a time, 20 at once (group-committed), 3 in one held Execute, one refused: 28 made.
      for (let i = 0; i < 5; i++) await put('f', `k${i}`);
      await Promise.all(Array.from({ length: 20 }, (_, i) => put('', `plain-${i}`)));
      await observed.withHeldCommits((update) => Promise.all(['a', 'b', 'c'].map((k) => update({ segmentId: '3', modifications: [{ family: 'g', key: Buffer.from(k), value: Buffer.from('1') }] }))));
      await expect(put('f', 'k0', { kind: 'NOT_EXISTS' })).rejects.toMatchObject({ code: 'BAD_KEY_VERSION' });

      const { flushes, applies } = engine.commitStats;
      expect(applies).toBe(0);
      expect(await countOf(registry, 'kvt_segmentstore_flush_updates')).toBe(flushes);
      expect(await sumOf(registry, 'kvt_segmentstore_flush_updates')).toBe(28);
      expect(await countOf(registry, 'kvt_segmentstore_flush_bytes')).toBe(flushes);
      expect(await countOf(registry, 'kvt_segmentstore_flush_seconds')).toBe(flushes);
      // Each flush is one record of the log, of one 4 KiB block (small writes), all held until applied.
      expect(await countOf(registry, 'kvt_segmentstore_log_write_seconds')).toBe(flushes);
      expect(await valueOf(registry, 'kvt_segmentstore_durable_log_held_bytes')).toBe(flushes * 4096);
      expect(await countOf(registry, 'kvt_segmentstore_apply_lag_seconds')).toBe(0);

      // A scan reads LevelDB: everything is applied first, in one apply, and the log released.
      expect((await observed.scan({ segmentId: '3', maxItems: 100, includeValues: false })).items).toHaveLength(28);
      expect(engine.commitStats.applies).toBe(1);
      expect(await countOf(registry, 'kvt_segmentstore_apply_lag_seconds')).toBe(1);
      expect(await valueOf(registry, 'kvt_segmentstore_durable_log_held_bytes')).toBe(0);
      expect(await valueOf(registry, 'kvt_segmentstore_log_applied_writes_total')).toBe(engine.commitStats.appliedOps);
    } finally {
      await engine.close();
    }
  });

  it('counts the lookups of its chunk and directory caches by result, and what they hold against their budgets', async () => {
    const where = path.join(dir, 'caches');
    let engine = await SegmentEngine.open(where, { expirySweepIntervalMs: 0 });
    await engine.createSegment('5', 's/t#0');
    await engine.update({ segmentId: '5', modifications: [{ family: 'f', key: Buffer.from('a'), value: Buffer.from('v') }] });
    await engine.close();
    // Reopened: both caches empty.
    engine = await SegmentEngine.open(where, { expirySweepIntervalMs: 0, chunkCacheBytes: 1 << 20 });
    try {
      const registry = newMetricsRegistry();
      new StoreMetrics(registry, () => engine, 0);
      const lookups = (cache: string, result: string) => valueOf(registry, 'kvt_segmentstore_cache_lookups_total', { cache, result });
      const get = () => engine.get({ segmentId: '5', keys: [{ family: 'f', key: Buffer.from('a') }] });
      expect(await lookups('chunk', 'hit')).toBe(0);
      expect(await valueOf(registry, 'kvt_segmentstore_cache_entries', { cache: 'chunk' })).toBe(0);
      // The first get finds neither the family's directory nor its chunk, reads the chunk from LevelDB and keeps it.
      expect((await get()).entries[0].found).toBe(true);
      const missed = await lookups('chunk', 'miss');
      expect(missed).toBeGreaterThan(0);
      expect(await lookups('chunk', 'hit')).toBe(0);
      expect(await lookups('directory', 'miss')).toBeGreaterThan(0);
      expect(await valueOf(registry, 'kvt_segmentstore_cache_entries', { cache: 'chunk' })).toBe(1);
      // The second is answered from the cache.
      expect((await get()).entries[0].found).toBe(true);
      expect(await lookups('chunk', 'hit')).toBe(1);
      expect(await lookups('chunk', 'miss')).toBe(missed);
      const { chunk, directory } = engine.cacheStats;
      expect(await valueOf(registry, 'kvt_segmentstore_cache_bytes', { cache: 'chunk' })).toBe(chunk.bytes);
      expect(chunk.bytes).toBeGreaterThan(0);
      expect(await valueOf(registry, 'kvt_segmentstore_cache_budget_bytes', { cache: 'chunk' })).toBe(1 << 20);
      expect(await valueOf(registry, 'kvt_segmentstore_cache_budget_bytes', { cache: 'directory' })).toBe(directory.budgetBytes);
      expect(await lookups('directory', 'hit')).toBe(directory.hits);
    } finally {
      await engine.close();
    }
  });

  it('is told of flushes without a durable log too (each a synced LevelDB write), and of no log write', async () => {
    const registry = newMetricsRegistry();
    const opened: { engine?: SegmentEngine } = {};
    const metrics = new StoreMetrics(registry, () => opened.engine, 0);
    const engine = await SegmentEngine.open(path.join(dir, 'unlogged'), { expirySweepIntervalMs: 0, logBytes: 0, observer: metrics });
    opened.engine = engine;
    try {
      const observed = metrics.observe(engine);
      await observed.createSegment('4', 's/t#0');
      for (let i = 0; i < 3; i++) await observed.update({ segmentId: '4', modifications: [{ family: '', key: Buffer.from(`k${i}`), value: Buffer.from('v') }] });
      expect(await countOf(registry, 'kvt_segmentstore_flush_updates')).toBe(3);
      expect(await sumOf(registry, 'kvt_segmentstore_flush_updates')).toBe(3);
      expect(await countOf(registry, 'kvt_segmentstore_log_write_seconds')).toBe(0);
      expect(await valueOf(registry, 'kvt_segmentstore_durable_log_held_bytes')).toBe(0);
    } finally {
      await engine.close();
    }
  });

  it('does not keep a scrape waiting for a slow count once it has figures, and spaces counts by ten times their duration', async () => {
    // The store's figures source, counting as slowly as the test says: each count takes 1.5 s of its clock.
    let now = 1_000_000;
    let entries = 1;
    let counts = 0;
    let release: (() => void) | undefined;
    const source = {
      commitStats: { flushes: 0, ops: 0, applies: 0, appliedOps: 0 },
      listSegments: async () => {
        counts++;
        if (counts > 1) await new Promise<void>((resolve) => (release = resolve));
        now += 1_500;
        return [{ entryCount: String(entries), bytes: '10' }];
      },
    };
    const registry = newMetricsRegistry();
    new StoreMetrics(
      registry,
      () => source,
      0,
      () => now,
    );
    // No figures yet: the first scrape waits for the count.
    expect(await valueOf(registry, 'kvt_segmentstore_entries')).toBe(1);
    expect(await valueOf(registry, 'kvt_segmentstore_count_seconds')).toBe(1.5);
    // Within ten times 1.5 s: no count at all.
    now += 14_000;
    entries = 2;
    expect(await valueOf(registry, 'kvt_segmentstore_entries')).toBe(1);
    expect(counts).toBe(1);
    // Due: a count starts, and the scrape answers the last figures without waiting for it.
    now += 1_000;
    expect(await valueOf(registry, 'kvt_segmentstore_entries')).toBe(1);
    expect(counts).toBe(2);
    release!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await valueOf(registry, 'kvt_segmentstore_entries')).toBe(2);
    expect(counts).toBe(2);
  });

  it('serves an engine that tells no caches and no durable log without their series, counts its commits as it tells them, and keeps its last figures when a count fails', async () => {
    let failing = false;
    let counts = 0;
    const source = {
      commitStats: { flushes: 3, ops: 7, applies: 0, appliedOps: 0 },
      listSegments: async () => {
        counts++;
        if (failing) throw new Error('the engine is closed');
        return [{ entryCount: '4', bytes: '40' }];
      },
    };
    const registry = newMetricsRegistry();
    // A clock that stands still: each count takes no time, so each scrape counts afresh.
    new StoreMetrics(
      registry,
      () => source,
      0,
      () => 1_000,
    );
    const text = await registry.metrics();
    expect(text).toContain('kvt_segmentstore_entries 4\n');
    expect(text).not.toMatch(/^kvt_segmentstore_cache_\w+\{/m);
    // No gauge that would read a constant 0 for an engine without a durable log.
    expect(registry.getSingleMetric('kvt_segmentstore_durable_log_held_bytes')).toBeUndefined();
    // Each scrape reads the engine's totals afresh (they are not added up).
    source.commitStats.flushes = 5;
    expect(await valueOf(registry, 'kvt_segmentstore_group_commit_flushes_total')).toBe(5);
    expect(await valueOf(registry, 'kvt_segmentstore_group_commit_flushes_total')).toBe(5);
    expect(await valueOf(registry, 'kvt_segmentstore_group_commit_writes_total')).toBe(7);
    // A store stopping cannot count: its scrape still answers, with the last figures.
    failing = true;
    const before = counts;
    expect(await valueOf(registry, 'kvt_segmentstore_entries')).toBe(4);
    expect(await valueOf(registry, 'kvt_segmentstore_bytes')).toBe(40);
    expect(counts).toBe(before + 2);
  });

  it('records what a StorageObserver is told (flush sizes and times, log writes, apply lag) from its first report on', async () => {
    const registry = newMetricsRegistry();
    const metrics = new StoreMetrics(registry, () => undefined);
    // Nothing reported yet: no histogram sits at zero.
    expect(registry.getSingleMetric('kvt_segmentstore_flush_updates')).toBeUndefined();
    expect(registry.getSingleMetric('kvt_segmentstore_durable_log_held_bytes')).toBeUndefined();
    metrics.flushed(10, 4096, 0.002);
    metrics.flushed(30, 8192, 0.004);
    metrics.logWritten(4096, 0.001);
    metrics.applied(40, 0.8);
    const sum = async (name: string) => (await registry.getSingleMetric(name)!.get()).values.find((v) => (v as { metricName?: string }).metricName === `${name}_sum`)!.value;
    expect(await countOf(registry, 'kvt_segmentstore_flush_updates')).toBe(2);
    expect(await sum('kvt_segmentstore_flush_updates')).toBe(40);
    expect(await sum('kvt_segmentstore_flush_bytes')).toBe(12288);
    expect(await sum('kvt_segmentstore_flush_seconds')).toBeCloseTo(0.006, 9);
    expect(await countOf(registry, 'kvt_segmentstore_log_write_seconds')).toBe(1);
    expect(await sum('kvt_segmentstore_apply_lag_seconds')).toBe(0.8);
  });
});

describe('FastCounter and FastHistogram (the hot path)', () => {
  it('count a value equal to a bucket bound in that bucket (le: less than or equal), as prom-client does', async () => {
    const registry = newMetricsRegistry();
    const cell = new FastHistogram(registry, 'fast_sizes', 'Sizes.', [], [1, 2, 4]).series();
    const reference = new Histogram({ name: 'reference_sizes', help: 'Sizes.', buckets: [1, 2, 4], registers: [registry] });
    for (const v of [0, 1, 2, 2, 3, 4, 5]) {
      cell.observe(v);
      reference.observe(v);
    }
    const buckets = async (name: string) =>
      (await registry.getSingleMetric(name)!.get()).values.filter((v) => (v as { metricName?: string }).metricName === `${name}_bucket`).map((v) => [v.labels.le, v.value]);
    expect(await buckets('fast_sizes')).toEqual([
      [1, 2],
      [2, 4],
      [4, 6],
      ['+Inf', 7],
    ]);
    expect(await buckets('fast_sizes')).toEqual(await buckets('reference_sizes'));
  });

  it('appear in the registry like prom-client metrics: labelled counters, cumulative buckets, +Inf, sum and count', async () => {
    const registry = newMetricsRegistry();
    const counter = new FastCounter(registry, 'x_total', 'What x counts.', ['op']);
    counter.series('a').inc();
    counter.series('a').inc(2);
    counter.series('b').inc();
    const cell = new FastHistogram(registry, 'y_seconds', 'How long y took.', ['op'], [0.1, 1]).series('a');
    for (const v of [0.05, 0.5, 5]) cell.observe(v);
    const text = await registry.metrics();
    expect(text).toContain(['# HELP x_total What x counts.', '# TYPE x_total counter', 'x_total{op="a"} 3', 'x_total{op="b"} 1'].join('\n'));
    expect(text).toContain(
      [
        '# TYPE y_seconds histogram',
        'y_seconds_bucket{op="a",le="0.1"} 1',
        'y_seconds_bucket{op="a",le="1"} 2',
        'y_seconds_bucket{op="a",le="+Inf"} 3',
        'y_seconds_sum{op="a"} 5.55',
        'y_seconds_count{op="a"} 3',
      ].join('\n'),
    );
    expect((await registry.getMetricsAsJSON()).map((m) => [m.name, m.type])).toEqual([
      ['x_total', 'counter'],
      ['y_seconds', 'histogram'],
    ]);
  });
});

describe('the Prometheus endpoint', () => {
  it('serves the registry in the text format at /metrics, and nothing else', async () => {
    const registry = newMetricsRegistry(true);
    const endpoint = await startMetricsServer(registry, '127.0.0.1', 0);
    try {
      const base = `http://127.0.0.1:${endpoint.port}`;
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(registry.contentType);
      const text = await res.text();
      expect(text).toMatch(/^# HELP process_cpu_user_seconds_total /m);
      expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
      expect((await fetch(`${base}/`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
      await expect(startMetricsServer(registry, '127.0.0.1', endpoint.port)).rejects.toThrow(`port 127.0.0.1:${endpoint.port} is already in use`);
    } finally {
      await endpoint.close();
    }
  });
});

describe('the client option metrics', () => {
  it('takes a prom-client Registry, shared by several factories', async () => {
    const registry = new Registry();
    const a = KeyValueTableFactory.withScope('s', { metrics: registry });
    const b = KeyValueTableFactory.withScope('s', { metrics: registry });
    await a.close();
    await b.close();
    expect(registry.getSingleMetric('kvt_client_errors_total')).toBeDefined();
    expect(registry.getSingleMetric('kvt_client_subrequests_per_call')).toBeDefined();
  });

  it('refuses anything else with InvalidArgumentError naming the option', () => {
    expect(() => KeyValueTableFactory.withScope('s', { metrics: {} as Registry })).toThrow(
      new InvalidArgumentError('metrics is a object without getSingleMetric and registerMetric; it must be a prom-client Registry'),
    );
    expect(() => KeyValueTableFactory.withScope('s', { metrics: null as unknown as Registry })).toThrow(InvalidArgumentError);
  });
});

describe('--metrics-port and --http-port', () => {
  it('are off unless given, 0 for an ephemeral port, from the flag or the environment', () => {
    expect(loadControllerConfig([], {})).toMatchObject({ metricsPort: undefined, httpPort: undefined });
    expect(loadControllerConfig(['--metrics-port', '0', '--http-port', '8080'], {})).toMatchObject({ metricsPort: 0, httpPort: 8080 });
    expect(loadControllerConfig([], { KVT_CONTROLLER_METRICS_PORT: '9100', KVT_CONTROLLER_HTTP_PORT: '8081' })).toMatchObject({ metricsPort: 9100, httpPort: 8081 });
    expect(loadSegmentStoreConfig([], {}).config.metricsPort).toBeUndefined();
    expect(loadSegmentStoreConfig(['--metrics-port', '9101'], {}).config.metricsPort).toBe(9101);
    expect(loadSegmentStoreConfig([], { KVT_SEGMENTSTORE_METRICS_PORT: '0' }).config.metricsPort).toBe(0);
  });

  it('refuse a port out of range, or one another listener of the process has', () => {
    expect(() => loadControllerConfig(['--metrics-port', '70000'], {})).toThrow(new UsageError('--metrics-port is 70000; the maximum is 65535'));
    expect(() => loadControllerConfig(['--port', '9090', '--http-port', '9090'], {})).toThrow(new UsageError('--http-port is 9090, the port of --port; give each listener its own port'));
    expect(() => loadSegmentStoreConfig(['--port', '12345', '--metrics-port', '12345'], {})).toThrow(new UsageError('--metrics-port is 12345, the port of --port; give each listener its own port'));
    expect(() => checkDistinctPorts({ port: 0, 'metrics-port': 0, 'http-port': 0 })).not.toThrow();
  });
});
