/**
 * Retiring a dead segment store (RemoveSegmentStore, `manager.removeSegmentStore`) with a real
 * controller and real segment stores: a table left CREATING or DELETING by a store that never comes
 * back is completed; a live store, an unknown id and (without force) a store holding ACTIVE data are
 * refused; with force the lost partitions start empty on a live store and the others keep their data;
 * the removed store, restarted on its old data directory, is refused and never serves; a controller
 * killed midway through a removal finishes it after its restart.
 */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  KeyValueTableFactory,
  KeyValueTableManager,
  SegmentStoreHoldsDataError,
  SegmentStoreLiveError,
  SegmentStoreNotFoundError,
  Serializers,
  TableNotFoundError,
  UnavailableError,
} from '../../client';
import { ERROR_CODE_TRAILER } from '../../proto/error-codes';
import type { ListSegmentStoresResponse, Routing, TableInfo } from '../../proto/messages';
import { fetchRouting, ownerOf, rawCall, rawClient } from '../harness/oracle';
import { freePort, KvtProcess, spawnKvt, startController, startSegmentStore, tempDir } from '../harness/process';
import { controllerClient, failureOf, RpcClient, segmentStoreClient, storeSegments, waitFor } from './controller-helpers';

/**
 * Fast liveness: a killed store is dead within three seconds (long enough for a store killed just
 * before a create to get a partition of it); creates and deletes give up after 1.5 s.
 */
const CONTROLLER_ARGS = ['--heartbeat-interval-ms', '100', '--store-timeout-ms', '3000', '--create-wait-ms', '1500', '--resume-interval-ms', '200'];
/** Enough retries for a client to outlast a store's death and find the new routing. */
const CLIENT = { timeoutMs: 15_000, retry: { maxRetries: 20, initialBackoffMs: 50, maxBackoffMs: 500 } };
const utf8 = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };

/**
 * A controller (on a stable port, so it can be restarted) and two stores, each on a stable port,
 * ordered by store id: placement alternates in id order, so store 0 gets partitions 0, 2, … and
 * store 1 partitions 1, 3, … of a new table.
 */
class Cluster {
  controller!: KvtProcess;
  stores: KvtProcess[] = [];
  storeIds: string[] = [];
  storePorts: number[] = [];
  storeDirs: string[] = [];
  controllerPort = 0;
  private readonly managers: KeyValueTableManager[] = [];
  private readonly clients: RpcClient[] = [];

  constructor(readonly root: string) {}

  static async start(root: string): Promise<Cluster> {
    const cluster = new Cluster(root);
    cluster.controllerPort = await freePort();
    await cluster.startController();
    const started: Array<{ store: KvtProcess; id: string; port: number; dir: string }> = [];
    for (const i of [0, 1]) {
      const port = await freePort();
      const dir = path.join(root, `store-${i}`);
      const store = await startSegmentStore(dir, cluster.controller.address, ['--port', String(port)]);
      cluster.stores.push(store);
      await store.waitForLog('registered with controller');
      started.push({ store, id: String((await store.waitForLog('segment store started')).storeId), port, dir });
    }
    started.sort((a, b) => (a.id < b.id ? -1 : 1));
    cluster.stores = started.map((s) => s.store);
    cluster.storeIds = started.map((s) => s.id);
    cluster.storePorts = started.map((s) => s.port);
    cluster.storeDirs = started.map((s) => s.dir);
    return cluster;
  }

  async startController(env?: NodeJS.ProcessEnv): Promise<void> {
    this.controller = await startController(path.join(this.root, 'controller'), ['--port', String(this.controllerPort), ...CONTROLLER_ARGS], env);
  }

  manager(): KeyValueTableManager {
    const manager = new KeyValueTableManager({ controller: this.controller.address, ...CLIENT });
    this.managers.push(manager);
    return manager;
  }

  /** A raw client of store `i`, closed with the cluster. */
  storeClient(i: number): RpcClient {
    const client = segmentStoreClient(this.stores[i].address);
    this.clients.push(client);
    return client;
  }

  /** SIGKILLs store `i` and waits until the controller counts it dead. */
  async killStore(i: number): Promise<void> {
    await this.stores[i].kill('SIGKILL');
    await this.waitDead(i);
  }

  /** Waits until the controller counts store `i` dead (after a controller restart: once its grace is over). */
  async waitDead(i: number): Promise<void> {
    const client = controllerClient(this.controller.address);
    try {
      await waitFor(`store ${i} to be dead`, async () => {
        const { stores } = await client.call<ListSegmentStoresResponse>('ListSegmentStores');
        return stores.find((s) => s.storeId === this.storeIds[i])?.live === false ? true : undefined;
      });
    } finally {
      client.close();
    }
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.close();
    await Promise.all(this.managers.map((m) => m.close()));
    await Promise.all(this.stores.map((s) => s.stop()));
    await this.controller?.stop();
  }
}

async function withCluster(body: (c: Cluster) => Promise<void>): Promise<void> {
  using dir = tempDir('kvt-remove-');
  const cluster = await Cluster.start(dir.path);
  try {
    await body(cluster);
  } finally {
    await cluster.stop();
  }
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/** Families `f0`… spread over the `n` partitions: the partition of each. */
function familiesByPartition(n: number, count: number): Map<string, number> {
  const routing = { partitionCount: n, partitions: Array.from({ length: n }, (_, index) => ({ index, storeId: String(index) })) } as unknown as Routing;
  return new Map(Array.from({ length: count }, (_, i) => [`f${i}`, Number(ownerOf(routing, `f${i}`))]));
}

/**
 * Calls Get on `segmentId` at `address` every 20 ms until `until()` holds (at most 3,000 calls),
 * adding each outcome to `outcomes`: 'OK', the kvt error code the store answered with, or
 * `status:<gRPC status>` for a call that reached no store (nothing listening).
 */
async function probe(address: string, segmentId: string, outcomes: string[], until: () => boolean): Promise<void> {
  const client = rawClient('SegmentStore', address);
  try {
    for (let i = 0; i < 3_000 && !until(); i++) {
      try {
        await rawCall(client, 'Get', { segmentId, keys: [{ family: '', key: Buffer.from('k') }] }, 1_000);
        outcomes.push('OK');
      } catch (err) {
        const e = err as grpc.ServiceError;
        const code = e.metadata?.get(ERROR_CODE_TRAILER)[0];
        outcomes.push(code === undefined ? `status:${grpc.status[e.code]}` : String(code));
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    client.close();
  }
}

describe('removing a dead segment store', () => {
  it('completes a table left CREATING by a store that died before creating its segments', async () => {
    await withCluster(async (c) => {
      const manager = c.manager();
      await manager.createScope('s');
      const client = controllerClient(c.controller.address);
      try {
        // Killed just before the create: still counted live, so it gets partition 1, which it never creates.
        await c.stores[1].kill('SIGKILL');
        const create = await failureOf(client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 2 } }));
        expect(create.kvtCode).toBe('UNAVAILABLE');
        expect(create.message).toContain('table s/t stays CREATING');
        await c.waitDead(1);
        expect((await client.call<TableInfo>('GetTable', { scope: 's', table: 't' })).state).toBe('CREATING');
        // Described, it shows which store it waits for, and that store cannot say what it holds.
        const stuck = await manager.describeKeyValueTable('s', 't', { contents: true });
        expect(stuck).toMatchObject({ scope: 's', name: 't', state: 'CREATING', partitionCount: 2 });
        expect(stuck.partitions.map((p) => [p.partition, p.store.id, p.store.address, p.store.live])).toEqual([
          [0, c.storeIds[0], c.stores[0].address, true],
          [1, c.storeIds[1], c.stores[1].address, false],
        ]);
        expect(stuck.partitions[1].contents).toEqual({ code: 'UNAVAILABLE', error: expect.stringContaining(c.stores[1].address) });
        // Creating it again with its partition count tries to finish it (before: created=false, so a
        // client retrying its UNAVAILABLE reported "exists" for a table nobody could use yet).
        const again = await failureOf(client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 2 } }));
        expect([again.kvtCode, again.message]).toEqual(['UNAVAILABLE', expect.stringContaining('table s/t stays CREATING')]);
        expect(await client.call('CreateTable', { scope: 's', table: 't', config: { partitionCount: 3 } })).toEqual({ created: false });
        const impatient = new KeyValueTableManager({ controller: c.controller.address, timeoutMs: 10_000, retry: { maxRetries: 1, initialBackoffMs: 50, maxBackoffMs: 200 } });
        try {
          const err = await rejection(impatient.createKeyValueTable('s', 't', { partitionCount: 2 }));
          expect(err).toBeInstanceOf(UnavailableError);
          expect(err.message).toContain('table s/t stays CREATING');
        } finally {
          await impatient.close();
        }

        const removal = await manager.removeSegmentStore(c.storeIds[1]);
        expect(removal).toEqual({
          removed: true,
          id: c.storeIds[1],
          address: c.stores[1].address,
          lostPartitions: [],
          placedPartitions: [{ scope: 's', name: 't', partition: 1, storeId: c.storeIds[0] }],
          deletingTables: [],
          unfinishedTables: [],
        });

        expect((await client.call<TableInfo>('GetTable', { scope: 's', table: 't' })).state).toBe('ACTIVE');
        expect(await manager.createKeyValueTable('s', 't', { partitionCount: 2 })).toBe(false);
        const placed = await manager.describeKeyValueTable('s', 't', { contents: true });
        expect(placed.state).toBe('ACTIVE');
        expect(placed.partitions.map((p) => [p.store.id, p.store.live, p.contents])).toEqual([
          [c.storeIds[0], true, { entries: 0, bytes: 0 }],
          [c.storeIds[0], true, { entries: 0, bytes: 0 }],
        ]);
        const routing = await fetchRouting(c.controller.address, 's', 't');
        expect(routing.partitions.map((p) => [p.storeId, p.storeLive])).toEqual([
          [c.storeIds[0], true],
          [c.storeIds[0], true],
        ]);
        expect(await storeSegments(c.storeClient(0))).toEqual(routing.partitions.map((p) => p.segmentId));
        expect((await manager.listSegmentStores()).map((s) => s.id)).toEqual([c.storeIds[0]]);

        await using factory = KeyValueTableFactory.withScope('s', { controller: c.controller.address, ...CLIENT });
        const table = factory.forKeyValueTable('t', utf8);
        const families = [...familiesByPartition(2, 8).keys()];
        for (const f of families) await table.put(f, 'k', f);
        for (const f of families) expect((await table.get(f, 'k'))?.value).toBe(f);
      } finally {
        client.close();
      }
    });
  });

  it('completes a table left DELETING by a store that died holding one of its segments', async () => {
    await withCluster(async (c) => {
      const manager = c.manager();
      await manager.createScope('s');
      await manager.createKeyValueTable('s', 'd', { partitionCount: 2 });
      await c.killStore(1);
      const client = controllerClient(c.controller.address);
      const del = await failureOf(client.call('DeleteTable', { scope: 's', table: 'd' })).finally(() => client.close());
      expect(del.kvtCode).toBe('UNAVAILABLE');
      expect(del.message).toContain('table s/d stays DELETING');
      const deleting = await manager.describeKeyValueTable('s', 'd');
      expect(deleting.state).toBe('DELETING');
      expect(deleting.partitions.map((p) => [p.store.id, p.store.live])).toEqual([
        [c.storeIds[0], true],
        [c.storeIds[1], false],
      ]);
      expect(await storeSegments(c.storeClient(0))).toEqual([]);
      // Creating it again meanwhile tries to finish the delete first (before: created=false, so the
      // caller took it for an existing table, whose puts then failed DELETING until it was gone).
      const creator = controllerClient(c.controller.address);
      const again = await failureOf(creator.call('CreateTable', { scope: 's', table: 'd', config: { partitionCount: 2 } })).finally(() => creator.close());
      expect([again.kvtCode, again.message]).toEqual(['UNAVAILABLE', expect.stringContaining('table s/d stays DELETING')]);
      expect((await manager.describeKeyValueTable('s', 'd')).state).toBe('DELETING');

      // A table being deleted loses nothing: no force needed.
      const removal = await manager.removeSegmentStore(c.storeIds[1]);
      expect(removal).toMatchObject({ removed: true, lostPartitions: [], placedPartitions: [], unfinishedTables: [] });
      expect(removal.deletingTables).toEqual([{ scope: 's', name: 'd' }]);
      expect(await rejection(manager.getKeyValueTableConfiguration('s', 'd'))).toBeInstanceOf(TableNotFoundError);
      expect(await manager.deleteKeyValueTable('s', 'd')).toBe(false);
      // Gone, it is created anew.
      expect(await manager.createKeyValueTable('s', 'd', { partitionCount: 2 })).toBe(true);
      expect((await manager.describeKeyValueTable('s', 'd')).state).toBe('ACTIVE');
      expect(await manager.deleteKeyValueTable('s', 'd')).toBe(true);
      expect(await manager.deleteScope('s')).toBe(true);
    });
  });

  it('refuses a live store, an unknown id, and without force a store holding ACTIVE data, changing nothing', async () => {
    await withCluster(async (c) => {
      const manager = c.manager();
      await manager.createScope('s');
      await manager.createKeyValueTable('s', 'a', { partitionCount: 4 }); // store 1: partitions 1 and 3
      await manager.createKeyValueTable('s', 'b', { partitionCount: 1 }); // store 0 (a tie goes to the lower id)

      const live = (await rejection(manager.removeSegmentStore(c.storeIds[1]))) as SegmentStoreLiveError;
      expect(live).toBeInstanceOf(SegmentStoreLiveError);
      expect(live.code).toBe('SEGMENT_STORE_LIVE');
      expect(live.message).toMatch(
        new RegExp(`^segment store ${c.storeIds[1]} at ${c.stores[1].address} is live \\(heard from \\d+ ms ago\\); ` + 'only a store not heard from for 3000 ms can be removed: stop it first$'),
      );

      const unknown = (await rejection(manager.removeSegmentStore('no-such-store'))) as SegmentStoreNotFoundError;
      expect(unknown).toBeInstanceOf(SegmentStoreNotFoundError);
      expect(unknown.code).toBe('SEGMENT_STORE_NOT_FOUND');
      expect(unknown.message).toBe('segment store no-such-store is not known to the controller');

      const routingBefore = await fetchRouting(c.controller.address, 's', 'a');
      expect(routingBefore.partitions.filter((p) => p.storeId === c.storeIds[1]).map((p) => p.index)).toEqual([1, 3]);
      await c.killStore(1);
      const holds = (await rejection(manager.removeSegmentStore(c.storeIds[1]))) as SegmentStoreHoldsDataError;
      expect(holds).toBeInstanceOf(SegmentStoreHoldsDataError);
      expect(holds.code).toBe('SEGMENT_STORE_HOLDS_DATA');
      expect(holds.message).toBe(
        `segment store ${c.storeIds[1]} holds the only copy of 2 partitions of ACTIVE tables: s/a (partitions 1, 3); ` +
          'removing it loses their data: remove it with force to give them new, empty segments on live stores',
      );

      expect((await manager.listSegmentStores()).map((s) => [s.id, s.live, s.segmentCount])).toEqual([
        [c.storeIds[0], true, 3],
        [c.storeIds[1], false, 2],
      ]);
      const routingAfter = await fetchRouting(c.controller.address, 's', 'a');
      expect(routingAfter.partitions).toEqual(routingBefore.partitions.map((p) => ({ ...p, storeLive: p.storeId === c.storeIds[0] })));
    });
  });

  it('with force gives the lost partitions new empty segments: the table works again and the other partitions keep their data', async () => {
    await withCluster(async (c) => {
      const manager = c.manager();
      await manager.createScope('s');
      await manager.createKeyValueTable('s', 't', { partitionCount: 4 });
      const families = familiesByPartition(4, 40);
      expect(new Set(families.values()).size).toBe(4);
      // The same client lives through the removal: it finds the new segments through its routing refresh.
      await using factory = KeyValueTableFactory.withScope('s', { controller: c.controller.address, ...CLIENT });
      const table = factory.forKeyValueTable('t', utf8);
      for (const f of families.keys()) await table.put(f, 'k', `before-${f}`);
      const before = await fetchRouting(c.controller.address, 's', 't');
      const lost = [1, 3];

      await c.killStore(1);
      const removal = await manager.removeSegmentStore(c.storeIds[1], { force: true });
      expect(removal).toEqual({
        removed: true,
        id: c.storeIds[1],
        address: c.stores[1].address,
        placedPartitions: [],
        deletingTables: [],
        unfinishedTables: [],
        lostPartitions: lost.map((partition) => ({ scope: 's', name: 't', partition, storeId: c.storeIds[0] })),
      });

      const after = await fetchRouting(c.controller.address, 's', 't');
      expect(BigInt(after.generation)).toBeGreaterThan(BigInt(before.generation));
      expect(after.partitions.every((p) => p.storeId === c.storeIds[0] && p.storeLive)).toBe(true);
      expect(after.partitions.filter((p) => p.segmentId !== before.partitions[p.index].segmentId).map((p) => p.index)).toEqual(lost);
      for (const [f, partition] of families) {
        expect((await table.get(f, 'k'))?.value ?? null).toBe(lost.includes(partition) ? null : `before-${f}`);
      }
      for (const f of families.keys()) await table.put(f, 'k2', `after-${f}`);
      for (const f of families.keys()) expect((await table.get(f, 'k2'))?.value).toBe(`after-${f}`);

      // Idempotent: the same report again, marked as removed before.
      expect(await manager.removeSegmentStore(c.storeIds[1], { force: true })).toEqual({ ...removal, removed: false });
    });
  });

  it('refuses the removed store when it comes back with its old data directory: it says to wipe it, exits 1 and never serves', async () => {
    await withCluster(async (c) => {
      const manager = c.manager();
      await manager.createScope('s');
      await manager.createKeyValueTable('s', 't', { partitionCount: 2 });
      const staleSegment = (await fetchRouting(c.controller.address, 's', 't')).partitions[1].segmentId;
      await c.killStore(1);
      await manager.removeSegmentStore(c.storeIds[1], { force: true });

      // Started while the controller is down, the store cannot be told yet: it must not serve meanwhile.
      await c.controller.stop();
      const seen: string[] = [];
      let done = false;
      const probing = probe(`127.0.0.1:${c.storePorts[1]}`, staleSegment, seen, () => done);
      const comeback = spawnKvt(['segmentstore', '--port', String(c.storePorts[1]), '--data-dir', c.storeDirs[1], '--controller', `127.0.0.1:${c.controllerPort}`, '--register-retry-max-ms', '200']);
      try {
        await comeback.waitForLog('segment store started');
        await waitFor('a call refused by the restarted store', async () => (seen.includes('UNAVAILABLE') ? true : undefined));
        await c.startController();
        expect(await comeback.waitForExit()).toBe(1);
      } finally {
        done = true;
        await comeback.kill();
        await probing;
      }
      expect(seen).not.toContain('OK');
      expect(comeback.logs.some((l) => l.msg === 'registered with controller')).toBe(false);
      expect(comeback.stderr.join('')).toBe(
        `kvt segmentstore: controller refused the registration: segment store ${c.storeIds[1]} was removed ` +
          'from the cluster; its data directory holds segments no table uses any more: wipe it and start the store again to join as a new ' +
          `store (data directory ${path.resolve(c.storeDirs[1])}); stopping\n`,
      );

      // Wiped, it joins as a new store.
      const rejoined = await startSegmentStore(path.join(c.root, 'store-1-wiped'), c.controller.address);
      c.stores.push(rejoined);
      await rejoined.waitForLog('registered with controller');
      const ids = (await c.manager().listSegmentStores()).map((s) => s.id);
      expect(ids).toHaveLength(2);
      expect(ids).toContain(c.storeIds[0]);
      expect(ids).not.toContain(c.storeIds[1]);
    });
  });

  it('finishes a removal after the controller is killed midway, and reports the same removal again', async () => {
    await withCluster(async (c) => {
      const setup = c.manager();
      await setup.createScope('s');
      await setup.createKeyValueTable('s', 't', { partitionCount: 4 }); // store 1: partitions 1 and 3
      await c.killStore(1);
      // The controller now pauses 3 s after each segment it creates, so the kill lands between the two new ones.
      await c.controller.stop();
      await c.startController({ KVT_CONTROLLER_TEST_PAUSE_AFTER_SEGMENT_MS: '3000' });
      await c.waitDead(1);
      const store0 = c.storeClient(0);
      const hosted = (await storeSegments(store0)).length;

      const removal = c.manager().removeSegmentStore(c.storeIds[1], { force: true });
      removal.catch(() => undefined);
      await waitFor('the first new segment', async () => ((await storeSegments(store0)).length > hosted ? true : undefined), 30_000, 50);
      await c.controller.kill('SIGKILL');
      expect((await storeSegments(store0)).length).toBe(hosted + 1);
      await failureOf(removal);

      await c.startController();
      await waitFor('routing on the live store only', async () => {
        const r = await fetchRouting(c.controller.address, 's', 't');
        return r.partitions.every((p) => p.storeId === c.storeIds[0] && p.storeLive) ? r : undefined;
      });
      expect((await storeSegments(store0)).length).toBe(hosted + 2);
      await using factory = KeyValueTableFactory.withScope('s', { controller: c.controller.address, ...CLIENT });
      const table = factory.forKeyValueTable('t', utf8);
      const families = [...familiesByPartition(4, 12).keys()];
      for (const f of families) await table.put(f, 'k', f);
      for (const f of families) expect((await table.get(f, 'k'))?.value).toBe(f);

      const again = await c.manager().removeSegmentStore(c.storeIds[1]);
      expect(again).toMatchObject({ removed: false, placedPartitions: [], deletingTables: [], unfinishedTables: [] });
      expect(again.lostPartitions.map((p) => p.partition)).toEqual([1, 3]);
    });
  });
});
