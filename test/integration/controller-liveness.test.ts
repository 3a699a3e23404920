/**
 * Liveness across controller restarts and store identities, with a real controller and real segment
 * stores: new tables go only to stores heard from since the controller started; two processes with
 * one STORE_ID do not take the id in turns; a restarted controller's heartbeat interval reaches the
 * stores without a new registration.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RETRY_MARGIN_MS } from '../../controller/service/store-registry';
import type { ListSegmentStoresResponse, Routing, TableInfo } from '../../proto/messages';
import { freePort, KvtProcess, startController, startSegmentStore, tempDir } from '../harness/process';
import { controllerClient, waitFor } from './controller-helpers';

const count = (p: KvtProcess, msg: string) => p.logs.filter((l) => l.msg === msg).length;

describe('controller liveness', () => {
  it('after a restart, places a new table only on stores heard from since, not on one that died before', async () => {
    using dir = tempDir('kvt-ctl-place-');
    const port = await freePort();
    const args = ['--port', String(port), '--heartbeat-interval-ms', '200', '--store-timeout-ms', '3000', '--create-wait-ms', '4000'];
    let controller = await startController(path.join(dir.path, 'controller'), args);
    const live = await startSegmentStore(path.join(dir.path, 'live'), controller.address);
    const doomed = await startSegmentStore(path.join(dir.path, 'doomed'), controller.address);
    try {
      await Promise.all([live.waitForLog('registered with controller'), doomed.waitForLog('registered with controller')]);
      const doomedId = (await doomed.waitForLog('segment store started')).storeId as string;
      await doomed.kill('SIGKILL');
      await controller.stop();
      controller = await startController(path.join(dir.path, 'controller'), args);
      const client = controllerClient(controller.address);
      try {
        // Within the grace period both stores count as live for routing.
        const listed = await client.call<ListSegmentStoresResponse>('ListSegmentStores');
        expect(listed.stores.find((s) => s.storeId === doomedId)?.live).toBe(true);

        await client.call('CreateScope', { scope: 'p' });
        expect(await client.call('CreateTable', { scope: 'p', table: 't', config: { partitionCount: 4 } })).toEqual({ created: true });
        const info = await client.call<TableInfo>('GetTable', { scope: 'p', table: 't' });
        expect(info.state).toBe('ACTIVE');
        const routing = await client.call<Routing>('GetRouting', { scope: 'p', table: 't' });
        expect(routing.partitions.map((p) => p.storeAddress)).toEqual(Array(4).fill(live.address));
      } finally {
        client.close();
      }
    } finally {
      await live.stop();
      await controller.stop();
    }
  });

  it('refuses a second process with a copied STORE_ID while the first is live, and routing stays on the first', async () => {
    using dir = tempDir('kvt-ctl-dup-');
    const controller = await startController(path.join(dir.path, 'controller'), ['--heartbeat-interval-ms', '100', '--store-timeout-ms', '1000']);
    const client = controllerClient(controller.address);
    const first = await startSegmentStore(path.join(dir.path, 'a'), controller.address);
    let second: KvtProcess | undefined;
    try {
      await first.waitForLog('registered with controller');
      await client.call('CreateScope', { scope: 'd' });
      await client.call('CreateTable', { scope: 'd', table: 't', config: { partitionCount: 1 } });
      const before = await client.call<Routing>('GetRouting', { scope: 'd', table: 't' });

      fs.mkdirSync(path.join(dir.path, 'b'));
      fs.copyFileSync(path.join(dir.path, 'a', 'STORE_ID'), path.join(dir.path, 'b', 'STORE_ID'));
      second = await startSegmentStore(path.join(dir.path, 'b'), controller.address, ['--register-retry-max-ms', '200']);
      const refusal = await waitFor("the refusal in the second store's log", async () => second!.logs.find((l) => String(l.msg).startsWith('controller refused the registration')));
      expect(String(refusal.msg)).toContain(`is live at ${first.address}`);
      expect(String(refusal.msg)).toContain(`${second.address} cannot take it`);

      // Twenty heartbeat intervals later nothing has moved.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(count(second, 'registered with controller')).toBe(0);
      const after = await client.call<Routing>('GetRouting', { scope: 'd', table: 't' });
      expect(after.partitions[0].storeAddress).toBe(first.address);
      expect(after.generation).toBe(before.generation);

      // The first process goes away: after the timeout the second one takes the id (a store that moved).
      await first.kill('SIGKILL');
      await second.waitForLog('registered with controller', 15_000);
      const moved = await waitFor('routing to the second process', async () => {
        const r = await client.call<Routing>('GetRouting', { scope: 'd', table: 't' });
        return r.partitions[0].storeAddress === second!.address && r.partitions[0].storeLive ? r : undefined;
      });
      expect(moved.partitions[0].storeId).toBe(before.partitions[0].storeId);
    } finally {
      client.close();
      await second?.stop();
      await first.stop();
      await controller.stop();
    }
  });

  it('tells a moved store when its id is free, and the store registers with its next attempt', async () => {
    using dir = tempDir('kvt-ctl-move-');
    const timeoutMs = 6_000;
    const controller = await startController(path.join(dir.path, 'controller'), ['--heartbeat-interval-ms', '200', '--store-timeout-ms', String(timeoutMs)]);
    const storeDir = path.join(dir.path, 's');
    const first = await startSegmentStore(storeDir, controller.address);
    let moved: KvtProcess | undefined;
    try {
      await first.waitForLog('registered with controller');
      await first.kill('SIGKILL');
      // The same data directory on another port: the controller still holds the id at the old address.
      moved = await startSegmentStore(storeDir, controller.address, ['--log-level', 'debug']);
      await moved.waitForLog('registered with controller', 3 * timeoutMs);
      const refusals = moved.logs.filter((l) => String(l.msg).startsWith('controller refused the registration'));
      expect(refusals).toHaveLength(1);
      const heardAgo = Number(/heard from (\d+) ms ago/.exec(String(refusals[0].msg))?.[1]);
      expect(heardAgo).toBeGreaterThanOrEqual(0);
      // The refusal said when the old address will have been silent long enough, and the store waited
      // exactly that (not its 200 ms first backoff), so no attempt was refused after it.
      expect(refusals[0].retryInMs).toBe(timeoutMs - heardAgo + RETRY_MARGIN_MS);
      expect(count(moved, 'registration retry failed')).toBe(0);
      expect(count(moved, 'registered with controller')).toBe(1);
    } finally {
      await moved?.stop();
      await first.stop();
      await controller.stop();
    }
  });

  it('hands a restarted controller heartbeat interval to the stores with the next heartbeat', async () => {
    using dir = tempDir('kvt-ctl-hb-');
    const port = await freePort();
    const controllerDir = path.join(dir.path, 'controller');
    // The old interval is long enough for the controller to restart within it on a loaded machine
    // (a heartbeat sent while it is down makes the store register again, which is not this path).
    let controller = await startController(controllerDir, ['--port', String(port), '--heartbeat-interval-ms', '8000', '--store-timeout-ms', '30000']);
    const store = await startSegmentStore(path.join(dir.path, 's'), controller.address);
    try {
      await store.waitForLog('registered with controller');
      await controller.stop();
      controller = await startController(controllerDir, ['--port', String(port), '--heartbeat-interval-ms', '100', '--store-timeout-ms', '500']);
      const changed = await store.waitForLog('heartbeat interval changed by the controller', 20_000);
      expect(changed.heartbeatIntervalMs).toBe(100);
      // The first heartbeat after the restart came at the old pace (up to 8 s), past the new 500 ms
      // grace, so the store may have been marked dead once; at the old pace it would be marked dead
      // every second from then on.
      await new Promise((r) => setTimeout(r, 300));
      const deaths = count(controller, 'segment store is dead');
      expect(deaths).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 3_000));
      expect(count(controller, 'segment store is dead')).toBe(deaths);
      expect(count(store, 'registered with controller')).toBe(1);
    } finally {
      await store.stop();
      await controller.stop();
    }
  });
});
