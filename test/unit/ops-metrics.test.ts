/**
 * The metrics parts one by one, each on real things: the RPC interceptor and the metrics service on a
 * real gRPC server, the store's operation counters on a real storage engine, the Prometheus endpoint
 * over HTTP, the client's `metrics` option, and the port flags.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
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
import { fetchMetrics, METRICS_SERVICE, metricsHandlers } from '../../server-kit/metrics/metrics-service';
import { RpcMetrics } from '../../server-kit/metrics/rpc-metrics';
import { StoreMetrics } from '../../server-kit/metrics/store-metrics';

/** The value of one series of `name` in `registry` (0 when absent). */
async function valueOf(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const series = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l) && (v as { metricName?: string }).metricName === undefined);
  return series?.value ?? 0;
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
    server.addService(METRICS_SERVICE, metricsHandlers(registry));
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

  it('answers kvt.ops.v1.Metrics/Get with the metrics asked for, and a bad request with INVALID_ARGUMENT', async () => {
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    try {
      const answer = await fetchMetrics(client, ['grpc_server_started_total', 'no_such_metric'], Date.now() + 5000);
      expect(answer.metrics.map((m) => m.name)).toEqual(['grpc_server_started_total']);
      expect(answer.metrics[0].values.length).toBeGreaterThan(0);
      const bad = await new Promise<grpc.ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          '/kvt.ops.v1.Metrics/Get',
          (v: unknown) => Buffer.from(JSON.stringify(v)),
          (b: Buffer) => b,
          { names: 'all' },
          { deadline: Date.now() + 5000 },
          (err) => resolve(err),
        ),
      );
      expect(bad?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(bad?.details).toBe('names must be an array of at most 64 metric names');
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
