/**
 * Crash safety of the controller: SIGKILL in the middle of a table create or delete, restarts on the
 * same data directory, the bounded wait for a live store, and a table left CREATING by a dead store
 * finished by creating it again. Real processes throughout; the
 * controller's test-only pause (KVT_CONTROLLER_TEST_PAUSE_AFTER_SEGMENT_MS) holds it between segment
 * calls so the kill lands midway.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ListTablesResponse, Routing, TableInfo } from '../../proto/messages';
import { freePort, KvtProcess, startController, startSegmentStore, tempDir, TestCluster } from '../harness/process';
import { compareIds, controllerClient, failureOf, RpcClient, segmentStoreClient, storeSegments, waitFor } from './controller-helpers';

const PAUSE_ENV = { KVT_CONTROLLER_TEST_PAUSE_AFTER_SEGMENT_MS: '3000' };

/** A controller and two stores in `root`; the controller can be killed and restarted on its port. */
class CrashCluster {
  controller!: KvtProcess;
  stores: KvtProcess[] = [];
  storeClients: RpcClient[] = [];
  private clients: RpcClient[] = [];

  constructor(readonly root: string) {}

  async start(env?: NodeJS.ProcessEnv): Promise<RpcClient> {
    const client = await this.startController(await freePort(), env); // stable: restarted on it
    for (const i of [0, 1]) {
      const store = await startSegmentStore(path.join(this.root, `store-${i}`), this.controller.address);
      this.stores.push(store);
      await store.waitForLog('registered with controller');
      this.storeClients.push(segmentStoreClient(store.address));
    }
    return client;
  }

  /** Starts the controller on `port`, returning a fresh client. */
  async startController(port: number, env?: NodeJS.ProcessEnv): Promise<RpcClient> {
    this.controller = await startController(path.join(this.root, 'controller'), ['--port', String(port), '--resume-interval-ms', '200'], env);
    const client = controllerClient(this.controller.address);
    this.clients.push(client);
    return client;
  }

  /** Every segment id the stores host, sorted. */
  async hostedSegments(): Promise<string[]> {
    const lists = await Promise.all(this.storeClients.map((s) => storeSegments(s)));
    return lists.flat().sort(compareIds);
  }

  async stop(): Promise<void> {
    for (const c of [...this.clients, ...this.storeClients]) c.close();
    await Promise.all(this.stores.map((s) => s.stop()));
    await this.controller?.stop();
  }
}

async function withCluster(env: NodeJS.ProcessEnv | undefined, body: (c: CrashCluster, client: RpcClient) => Promise<void>): Promise<void> {
  using dir = tempDir('kvt-crash-');
  const cluster = new CrashCluster(dir.path);
  try {
    await body(cluster, await cluster.start(env));
  } finally {
    await cluster.stop();
  }
}

describe('controller crash recovery', () => {
  it('finishes a create killed midway: after restart the table is ACTIVE and the stores agree', async () => {
    await withCluster(PAUSE_ENV, async (cluster, client) => {
      await client.call('CreateScope', { scope: 'crash' });
      const create = client.call('CreateTable', { scope: 'crash', table: 't', config: { partitionCount: 4 } }, 60_000);
      create.catch(() => undefined);
      await waitFor('the first segment to exist', async () => ((await cluster.hostedSegments()).length > 0 ? true : undefined), 30_000, 50);
      const port = cluster.controller.port;
      await cluster.controller.kill('SIGKILL');
      expect((await cluster.hostedSegments()).length).toBeLessThan(4);
      await failureOf(create);

      const restarted = await cluster.startController(port);
      const info = await waitFor('the table to become ACTIVE', async () => {
        const t = await restarted.call<TableInfo>('GetTable', { scope: 'crash', table: 't' });
        return t.state === 'ACTIVE' ? t : undefined;
      });
      expect(info.config).toEqual({ partitionCount: 4 });
      const r = await restarted.call<Routing>('GetRouting', { scope: 'crash', table: 't' });
      expect(await cluster.hostedSegments()).toEqual(r.partitions.map((p) => p.segmentId).sort(compareIds));
      for (const [i, store] of cluster.stores.entries()) {
        const owned = r.partitions
          .filter((p) => p.storeAddress === store.address)
          .map((p) => p.segmentId)
          .sort(compareIds);
        expect(await storeSegments(cluster.storeClients[i])).toEqual(owned);
      }
      expect(await restarted.call('CreateTable', { scope: 'crash', table: 't', config: { partitionCount: 4 } })).toEqual({ created: false });
    });
  });

  it('finishes a delete killed midway: after restart the table is gone and so are its segments', async () => {
    await withCluster(undefined, async (cluster, first) => {
      await first.call('CreateScope', { scope: 'crash' });
      await first.call('CreateTable', { scope: 'crash', table: 'd', config: { partitionCount: 4 } });
      expect(await cluster.hostedSegments()).toHaveLength(4);
      // Only the delete should crawl: restart the controller with the test pause before it.
      await cluster.controller.stop();
      const client = await cluster.startController(cluster.controller.port, PAUSE_ENV);
      const del = client.call('DeleteTable', { scope: 'crash', table: 'd' }, 60_000);
      del.catch(() => undefined);
      await waitFor('the first segment to be deleted', async () => ((await cluster.hostedSegments()).length < 4 ? true : undefined), 30_000, 50);
      const port = cluster.controller.port;
      await cluster.controller.kill('SIGKILL');
      expect((await cluster.hostedSegments()).length).toBeGreaterThan(0);
      await failureOf(del);

      const restarted = await cluster.startController(port);
      await waitFor('the table to be gone', async () => {
        const failure = await failureOf(restarted.call('GetTable', { scope: 'crash', table: 'd' })).catch(() => undefined);
        return failure?.kvtCode === 'TABLE_NOT_FOUND' ? true : undefined;
      });
      expect(await cluster.hostedSegments()).toEqual([]);
      expect(await restarted.call('ListTables', { scope: 'crash' })).toEqual({ tables: [], continuationToken: '' });
      expect(await restarted.call('DeleteTable', { scope: 'crash', table: 'd' })).toEqual({ deleted: false });
    });
  });

  it('loses nothing across a restart: scopes, tables and routing are identical', async () => {
    await withCluster(undefined, async (cluster, client) => {
      for (const scope of ['one', 'two']) {
        await client.call('CreateScope', { scope });
        for (const [i, table] of ['a', 'b', 'c'].entries()) {
          await client.call('CreateTable', { scope, table, config: { partitionCount: i + 2 } });
        }
      }
      await client.call('CreateScope', { scope: 'empty' });
      const snapshot = async (c: RpcClient) => {
        const scopes = (await c.call<{ scopes: string[] }>('ListScopes')).scopes;
        const tables: unknown[] = [];
        for (const scope of scopes) {
          for (const table of (await c.call<ListTablesResponse>('ListTables', { scope })).tables) {
            const info = await c.call<TableInfo>('GetTable', { scope, table });
            const r = await c.call<Routing>('GetRouting', { scope, table });
            tables.push({ info, partitions: r.partitions });
          }
        }
        return { scopes, tables };
      };
      const before = await snapshot(client);
      const port = cluster.controller.port;
      await cluster.controller.kill('SIGKILL');
      const restarted = await cluster.startController(port);
      const after = await snapshot(restarted);
      expect(after).toEqual(before);
      expect(before.scopes).toEqual(['empty', 'one', 'two']);
      expect(before.tables).toHaveLength(6);
    });
  });
});

describe('controller without live stores', () => {
  it('fails CreateTable with UNAVAILABLE after the bounded wait and leaves no table behind', async () => {
    using dir = tempDir('kvt-nostore-');
    const ctl = await startController(path.join(dir.path, 'controller'), ['--create-wait-ms', '300']);
    const client = controllerClient(ctl.address);
    try {
      await client.call('CreateScope', { scope: 's' });
      const failure = await failureOf(client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 2 } }));
      expect(failure.kvtCode).toBe('UNAVAILABLE');
      expect(failure.message).toBe('no live segment store within 300 ms; table s/t was not created');
      expect((await failureOf(client.call('GetTable', { scope: 's', table: 't' }))).kvtCode).toBe('TABLE_NOT_FOUND');
    } finally {
      client.close();
      await ctl.stop();
    }
  });

  it('lets CreateTable wait for a store that registers meanwhile', async () => {
    using dir = tempDir('kvt-latestore-');
    const ctl = await startController(path.join(dir.path, 'controller'), ['--create-wait-ms', '60000']);
    const client = controllerClient(ctl.address);
    let store: KvtProcess | undefined;
    try {
      await client.call('CreateScope', { scope: 's' });
      const create = client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 2 } }, 90_000);
      store = await startSegmentStore(path.join(dir.path, 'store'), ctl.address);
      expect(await create).toEqual({ created: true });
      const r = await client.call<Routing>('GetRouting', { scope: 's', table: 't' });
      expect(r.partitions.every((p) => p.storeAddress === store!.address && p.storeLive)).toBe(true);
    } finally {
      client.close();
      await store?.stop();
      await ctl.stop();
    }
  });
});

describe('a table left CREATING by a dead store', () => {
  it('is finished by a second CreateTable with its partition count, waiting within create-wait-ms for the store to return', async () => {
    // The store stays "live" to the controller (a long store timeout) and the resumer waits an hour, so
    // nothing but the second CreateTable can finish the table.
    const args = ['--create-wait-ms', '6000', '--store-timeout-ms', '600000', '--resume-interval-ms', '3600000'];
    await using cluster = await TestCluster.start({ stores: 1, stableStorePorts: true, controllerArgs: args });
    const client = controllerClient(cluster.controllerAddress);
    try {
      await client.call('CreateScope', { scope: 's' });
      const storePort = cluster.stores[0].port;
      await cluster.stores[0].kill('SIGKILL');
      const first = await failureOf(client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 2 } }));
      expect([first.kvtCode, first.message]).toEqual(['UNAVAILABLE', expect.stringContaining('table s/t stays CREATING')]);
      expect((await client.call<TableInfo>('GetTable', { scope: 's', table: 't' })).state).toBe('CREATING');

      const second = client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 2 } }, 30_000);
      const store = await cluster.restartStore(0, storePort);
      // Before 115b3cb: created=false at once, for a table nobody could use yet.
      expect(await second).toEqual({ created: true });
      expect((await client.call<TableInfo>('GetTable', { scope: 's', table: 't' })).state).toBe('ACTIVE');
      const routing = await client.call<Routing>('GetRouting', { scope: 's', table: 't' });
      expect(routing.partitions.map((p) => p.storeAddress)).toEqual([store.address, store.address]);
      const storeClient = segmentStoreClient(store.address);
      try {
        expect(await storeSegments(storeClient)).toEqual(routing.partitions.map((p) => p.segmentId).sort(compareIds));
      } finally {
        storeClient.close();
      }
      // Once ACTIVE, the table exists: created=false.
      expect(await client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 2 } })).toEqual({ created: false });
    } finally {
      client.close();
    }
  }, 60_000);
});
