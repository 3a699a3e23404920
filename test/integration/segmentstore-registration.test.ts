/** A real segment store registering and heartbeating with a real controller (`kvt segmentstore --controller …`). */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import type { ListSegmentStoresResponse } from '../../proto/messages';
import { freePort, KvtProcess, startKvt, startSegmentStore, tempDir } from '../harness/process';

function startControllerOn(dataDir: string, port: number): Promise<KvtProcess> {
  return startKvt(['controller', '--port', String(port), '--data-dir', dataDir, '--heartbeat-interval-ms', '200'], { readyMsg: 'controller started' });
}

async function listStores(address: string): Promise<ListSegmentStoresResponse> {
  const client = new (kvtPackage().Controller)(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as grpc.Client & {
    ListSegmentStores(req: object, cb: (err: grpc.ServiceError | null, res: ListSegmentStoresResponse) => void): void;
  };
  try {
    return await new Promise((resolve, reject) => client.ListSegmentStores({}, (err, res) => (err ? reject(err) : resolve(res))));
  } finally {
    client.close();
  }
}

const registered = (p: KvtProcess) => p.logs.filter((l) => l.msg === 'registered with controller').length;

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kvt segmentstore --controller', () => {
  it('waits for an unreachable controller, registers, heartbeats, and registers again after a controller restart', async () => {
    using dir = tempDir('kvt-ss-reg-');
    const controllerDir = path.join(dir.path, 'controller');
    let controller = await startControllerOn(controllerDir, await freePort());
    const port = controller.port;
    expect(await controller.stop()).toBe(0);

    await using store = await startSegmentStore(path.join(dir.path, 'store'), `127.0.0.1:${port}`, ['--register-retry-max-ms', '300']);
    const storeId = (await store.waitForLog('segment store started')).storeId;
    expect(registered(store)).toBe(0);
    expect(store.running).toBe(true);

    controller = await startControllerOn(controllerDir, port);
    try {
      await store.waitForLog('registered with controller');
      await until(async () => (await listStores(controller.address)).stores.some((s) => s.storeId === storeId && s.live), 'the store to be live');
      const listed = (await listStores(controller.address)).stores.find((s) => s.storeId === storeId)!;
      expect(listed.address).toBe(store.address);
      const firstBeat = Number(listed.lastHeartbeatMs);
      await until(async () => Number((await listStores(controller.address)).stores.find((s) => s.storeId === storeId)!.lastHeartbeatMs) > firstBeat, 'a heartbeat');

      // The store must notice the controller is gone before it comes back: a restart quicker than a
      // failed heartbeat is answered by the new controller (it keeps its stores) and needs no new
      // registration, which made this test depend on how fast the controller restarts.
      const failedBeats = () => store.logs.filter((l) => l.msg === 'heartbeat failed; registering again').length;
      const failedBefore = failedBeats();
      expect(await controller.stop()).toBe(0);
      await until(() => failedBeats() > failedBefore, 'a failed heartbeat');
      controller = await startControllerOn(controllerDir, port);
      await until(() => registered(store) >= 2, 'a second registration');
    } finally {
      await controller.stop();
    }
  });
});
