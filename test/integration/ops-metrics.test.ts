/**
 * `--metrics-port` on real processes: after a known workload, each endpoint is scraped over HTTP and
 * its counters are checked against what the workload did (the stores' operations and entries, their
 * engines' flushes, log writes and applies, the client's calls and errors in the registry it was
 * given, the controller's RPCs and tables); and
 * `kvt cluster` gives every process a metrics port.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadKeyVersionError, KeyValueTableFactory, KeyValueTableManager, ScopeNotFoundError, Serializers } from '../../client';
import { freePort, KvtProcess, spawnKvt, tempDir, TestCluster } from '../harness/process';

/** One sample of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
}

async function scrape(port: number): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await res.text());
}

/** The metrics port a process logged when it started. */
function metricsPortOf(proc: KvtProcess, readyMsg: string): number {
  const port = proc.logs.find((r) => r.msg === readyMsg)?.metricsPort;
  expect(port, `${readyMsg} carries metricsPort`).toEqual(expect.any(Number));
  return port as number;
}

describe('--metrics-port after a workload', () => {
  let cluster: TestCluster;
  const PUTS = 300;
  const GETS = 20;
  const STALE = 5;
  const registry = new Registry();

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2, controllerArgs: ['--metrics-port', '0'], storeArgs: ['--metrics-port', '0'] });
    const controller = cluster.controllerAddress;
    const manager = new KeyValueTableManager({ controller });
    const factory = KeyValueTableFactory.withScope('ops', { controller, metrics: registry });
    try {
      expect(await manager.createScope('ops')).toBe(true);
      expect(await manager.createKeyValueTable('ops', 'm', { partitionCount: 4 })).toBe(true);
      await expect(manager.createKeyValueTable('no-such-scope', 'm', { partitionCount: 1 })).rejects.toThrow(ScopeNotFoundError);
      const table = factory.forKeyValueTable('m', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      // Concurrent puts, coalesced into Execute calls; then gets one at a time (none merged).
      const versions = await Promise.all(Array.from({ length: PUTS }, (_, i) => table.put(null, `key-${i}`, `value-${i}`)));
      for (let i = 0; i < GETS; i++) expect((await table.get(null, `key-${i}`))?.value).toBe(`value-${i}`);
      await table.put(null, 'key-0', 'newer');
      for (let i = 0; i < STALE; i++) await expect(table.replace(null, 'key-0', 'lost', versions[0])).rejects.toThrow(BadKeyVersionError);
    } finally {
      await factory.close();
      await manager.close();
    }
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('counts on the stores every operation the workload ran, by kind and outcome, and the entries it left', async () => {
    const stores = await Promise.all(cluster.stores.map((s) => scrape(metricsPortOf(s, 'segment store started'))));
    const sum = (name: string, labels: Record<string, string> = {}) => stores.reduce((n, samples) => n + total(samples, name, labels), 0);
    const ops = 'kvt_segmentstore_operations_total';
    expect(sum(ops, { op: 'update', code: 'OK' })).toBe(PUTS + 1);
    expect(sum(ops, { op: 'update', code: 'BAD_KEY_VERSION' })).toBe(STALE);
    expect(sum(ops, { op: 'get', code: 'OK' })).toBe(GETS);
    expect(sum('kvt_segmentstore_operation_seconds_count', { op: 'update' })).toBe(PUTS + 1 + STALE);
    expect(sum('kvt_segmentstore_segments')).toBe(4);
    expect(sum('kvt_segmentstore_entries')).toBe(PUTS);
    expect(sum('kvt_segmentstore_group_commit_flushes_total')).toBeGreaterThan(0);
    // Each store's caches, at their default budgets (the workload's keys are family-less: no chunk looked up).
    for (const samples of stores) {
      expect(total(samples, 'kvt_segmentstore_cache_budget_bytes', { cache: 'chunk' })).toBe(64 * 1024 * 1024);
      expect(total(samples, 'kvt_segmentstore_cache_budget_bytes', { cache: 'directory' })).toBe(16 * 1024 * 1024);
      expect(total(samples, 'kvt_segmentstore_cache_lookups_total', { cache: 'chunk', result: 'hit' })).toBe(0);
    }
    // The controller created the four segments; each store started its gRPC and Prometheus metrics.
    expect(sum('grpc_server_handled_total', { grpc_method: 'CreateSegment', grpc_code: 'OK' })).toBe(4);
    for (const samples of stores) expect(total(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });

  it('reports from the storage engines every flush with its updates, every log write, every apply and the log bytes held', async () => {
    const port = (s: KvtProcess) => metricsPortOf(s, 'segment store started');
    // A scrape counts each store's entries, which applies its durable log first: after it, everything is applied.
    await Promise.all(cluster.stores.map((s) => scrape(port(s))));
    const stores = await Promise.all(cluster.stores.map((s) => scrape(port(s))));
    // Every update that was made (the stale replaces were refused before staging) is in exactly one flush.
    expect(stores.reduce((n, samples) => n + total(samples, 'kvt_segmentstore_flush_updates_sum'), 0)).toBe(PUTS + 1);
    for (const samples of stores) {
      const flushes = total(samples, 'kvt_segmentstore_group_commit_flushes_total');
      expect(flushes).toBeGreaterThan(0);
      expect(total(samples, 'kvt_segmentstore_flush_updates_count')).toBe(flushes);
      expect(total(samples, 'kvt_segmentstore_flush_seconds_count')).toBe(flushes);
      // Small flushes: each one record of the durable log, one synced write.
      expect(total(samples, 'kvt_segmentstore_log_write_seconds_count')).toBe(flushes);
      const applies = total(samples, 'kvt_segmentstore_log_applies_total');
      expect(applies).toBeGreaterThan(0);
      expect(total(samples, 'kvt_segmentstore_apply_lag_seconds_count')).toBe(applies);
      expect(samples.filter((m) => m.name === 'kvt_segmentstore_durable_log_held_bytes').map((m) => m.value)).toEqual([0]);
    }
  });

  it("counts in the client's registry its Execute calls, the operations they carried and the errors by code, as the stores saw them", async () => {
    const samples = parseMetrics(await registry.metrics());
    const operations = PUTS + GETS + 1 + STALE;
    expect(total(samples, 'kvt_client_operations_total')).toBe(operations);
    expect(total(samples, 'kvt_client_subrequests_per_call_sum')).toBe(operations);
    const calls = total(samples, 'kvt_client_execute_calls_total');
    expect(total(samples, 'kvt_client_subrequests_per_call_count')).toBe(calls);
    // Coalesced: fewer calls than operations (the concurrent puts shared calls).
    expect(calls).toBeLessThan(operations);
    expect(total(samples, 'kvt_client_errors_total', { code: 'BAD_KEY_VERSION' })).toBe(STALE);
    expect(total(samples, 'kvt_client_errors_total')).toBe(STALE);
    // Each call was one message of an ExecuteStream, received by one of the stores.
    const stores = await Promise.all(cluster.stores.map((s) => scrape(metricsPortOf(s, 'segment store started'))));
    expect(stores.reduce((n, s) => n + total(s, 'grpc_server_msg_received_total', { grpc_method: 'ExecuteStream' }), 0)).toBe(calls);
  });

  it('counts on the controller its RPCs by method and code, its stores, scopes and tables', async () => {
    const samples = await scrape(metricsPortOf(cluster.controller, 'controller started'));
    const handled = (method: string, code: string) => total(samples, 'grpc_server_handled_total', { grpc_service: 'kvt.v1.Controller', grpc_method: method, grpc_code: code });
    expect(handled('CreateScope', 'OK')).toBe(1);
    expect(handled('CreateTable', 'OK')).toBe(1);
    expect(handled('CreateTable', 'NOT_FOUND')).toBe(1);
    // (A store registers again after a lost heartbeat: at least once each.)
    expect(handled('RegisterSegmentStore', 'OK')).toBeGreaterThanOrEqual(2);
    expect(handled('GetRouting', 'OK')).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'grpc_server_handling_seconds_count', { grpc_method: 'CreateTable' })).toBe(2);
    expect(total(samples, 'kvt_controller_segment_stores', { state: 'live' })).toBe(2);
    expect(total(samples, 'kvt_controller_segment_stores', { state: 'dead' })).toBe(0);
    expect(total(samples, 'kvt_controller_scopes')).toBe(1);
    expect(total(samples, 'kvt_controller_tables', { state: 'ACTIVE' })).toBe(1);
    expect(total(samples, 'kvt_controller_tables', { state: 'CREATING' })).toBe(0);
    expect(total(samples, 'kvt_controller_partitions_on_dead_stores')).toBe(0);
  });
});

describe('kvt cluster', () => {
  it('gives the controller and every store a metrics port, and the controller its status page', async () => {
    using dir = tempDir('kvt-ops-cluster-');
    const cluster = spawnKvt(['cluster', '--data-dir', dir.path, '--controller-port', String(await freePort()), '--segment-store-port', '0', '--segment-stores', '2']);
    try {
      await cluster.waitForLog('controller started', 30_000);
      const deadline = Date.now() + 30_000;
      while (cluster.logs.filter((l) => l.msg === 'registered with controller').length < 2) {
        if (Date.now() > deadline || !cluster.running) throw new Error(`stores did not register: ${cluster.stderr.join('')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const started = cluster.logs.filter((l) => l.msg === 'controller started' || l.msg === 'segment store started');
      expect(started).toHaveLength(3);
      const ports = started.map((l) => l.metricsPort as number);
      expect(new Set(ports).size).toBe(3);
      for (const port of ports) expect(total(await scrape(port), 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      const httpPort = cluster.logs.find((l) => l.msg === 'controller started')!.httpPort as number;
      const page = await fetch(`http://127.0.0.1:${httpPort}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>kvt cluster status</title>');
    } finally {
      cluster.child.kill('SIGINT');
      expect(await cluster.waitForExit()).toBe(0);
    }
  });
});
