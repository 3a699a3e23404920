/**
 * grpc.health.v1 on every process, asked by a real gRPC health client (and by `kvt health`): SERVING
 * once a store is registered and the controller listens, NOT_SERVING before a store's registration,
 * while a process stops, and after a fail-stop.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SegmentStoreServer } from '../../segmentstore/server';
import { checkHealth, healthClient, HealthStatus } from '../../server-kit/health';
import { silentLogger } from '../../server-kit/log';
import { failNextLogWrite } from '../harness/leveldb-faults';
import { freePort, KVT_BIN, KvtProcess, REPO_ROOT, startController, startSegmentStore, tempDir, TestCluster } from '../harness/process';

/** Runs `kvt <args>` to its end. */
function kvt(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [KVT_BIN, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Opens a Watch on `address` and collects every status it is sent until the stream ends. */
function watch(address: string): { statuses: HealthStatus[]; first: Promise<void>; ended: Promise<grpc.StatusObject>; close(): void } {
  const client = healthClient(address);
  const call = client.Watch({ service: '' });
  const statuses: HealthStatus[] = [];
  const first = new Promise<void>((resolve) =>
    call.on('data', (m: { status: HealthStatus }) => {
      statuses.push(m.status);
      resolve();
    }),
  );
  const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  return { statuses, first, ended, close: () => client.close() };
}

describe('grpc.health.v1 on a running cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('answers SERVING on the controller and on every registered store, as a whole and for its kvt service', async () => {
    expect(await checkHealth(cluster.controllerAddress)).toBe('SERVING');
    expect(await checkHealth(cluster.controllerAddress, { service: 'kvt.v1.Controller' })).toBe('SERVING');
    for (const store of cluster.stores) {
      expect(await checkHealth(store.address)).toBe('SERVING');
      expect(await checkHealth(store.address, { service: 'kvt.v1.SegmentStore' })).toBe('SERVING');
    }
    await expect(checkHealth(cluster.controllerAddress, { service: 'kvt.v1.NoSuchService' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('`kvt health` prints the status and exits 0 only for SERVING; an unreachable process is one line and exit 1', async () => {
    const ok = await kvt(['health', cluster.stores[0].address]);
    expect(ok).toEqual({ code: 0, stdout: 'SERVING\n', stderr: '' });
    expect((await kvt(['health', cluster.controllerAddress, '--service', 'kvt.v1.Controller'])).code).toBe(0);
    const nobody = `127.0.0.1:${await freePort()}`;
    const down = await kvt(['health', nobody, '--timeout-ms', '2000']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(new RegExp(`^kvt health: ${nobody} did not answer the health check: .+\\n$`));
    expect((await kvt(['health'])).code).toBe(2);
  });

  it('tells a Watch NOT_SERVING as soon as a store starts stopping, then ends the stream', async () => {
    const store = cluster.stores[1];
    const w = watch(store.address);
    try {
      await w.first;
      expect(w.statuses).toEqual(['SERVING']);
      store.child.kill('SIGTERM');
      const status = await w.ended;
      expect(w.statuses).toEqual(['SERVING', 'NOT_SERVING']);
      expect(status.code).toBe(grpc.status.OK);
      expect(await store.waitForExit()).toBe(0);
    } finally {
      w.close();
    }
    // The stop was not held up by the open Watch: the store stopped as it always does.
    expect(store.logs.some((r) => r.msg === 'segment store stopped')).toBe(true);
  });
});

describe('grpc.health.v1 before registration, while the controller stops, after a fail-stop', () => {
  it('answers NOT_SERVING from a store until the controller accepts it, then SERVING', async () => {
    using dir = tempDir('kvt-ops-health-');
    const controllerPort = await freePort();
    const store = await startSegmentStore(path.join(dir.path, 'store'), `127.0.0.1:${controllerPort}`, ['--register-retry-max-ms', '300']);
    let controller: KvtProcess | undefined;
    try {
      expect(await checkHealth(store.address)).toBe('NOT_SERVING');
      expect((await kvt(['health', store.address])).stdout).toBe('NOT_SERVING\n');
      controller = await startController(path.join(dir.path, 'controller'), ['--port', String(controllerPort)]);
      await store.waitForLog('registered with controller');
      await expect.poll(() => checkHealth(store.address), { timeout: 10_000 }).toBe('SERVING');
    } finally {
      await store.stop();
      await controller?.stop();
    }
  });

  it('tells a Watch NOT_SERVING as soon as the controller starts stopping', async () => {
    using dir = tempDir('kvt-ops-health-');
    const controller = await startController(path.join(dir.path, 'controller'));
    const w = watch(controller.address);
    try {
      await w.first;
      controller.child.kill('SIGTERM');
      await w.ended;
      expect(w.statuses).toEqual(['SERVING', 'NOT_SERVING']);
      expect(await controller.waitForExit()).toBe(0);
    } finally {
      w.close();
      await controller.stop();
    }
  });

  it('answers NOT_SERVING from a store whose storage write failed (fail-stop), while it still runs', async () => {
    using dir = tempDir('kvt-ops-health-');
    await using server = await SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger });
    const address = `127.0.0.1:${server.port}`;
    expect(await checkHealth(address)).toBe('SERVING');
    await server.engine.createSegment('1');
    const fault = failNextLogWrite('injected write failure');
    try {
      await expect(server.engine.update({ segmentId: '1', modifications: [{ key: Buffer.from('k'), value: Buffer.from('v') }] })).rejects.toThrow('injected write failure');
    } finally {
      fault();
    }
    await server.fatal;
    expect(server.state).toBe('running');
    expect(await checkHealth(address)).toBe('NOT_SERVING');
  });
});
