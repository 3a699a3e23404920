/**
 * The controller's RPCs against a real controller and real segment stores (processes, gRPC, LevelDB).
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListSegmentStoresResponse, ListTablesResponse, Routing, SegmentInfo, TableInfo } from '../../proto/messages';
import { KvtProcess, startController, startSegmentStore, tempDir, TestCluster } from '../harness/process';
import { controllerClient, failureOf, RpcClient, segmentStoreClient, storeSegments, waitFor } from './controller-helpers';

let cluster: TestCluster;
let controller: RpcClient;
let stores: RpcClient[];

beforeAll(async () => {
  cluster = await TestCluster.start({ stores: 2 });
  controller = controllerClient(cluster.controllerAddress);
  stores = cluster.stores.map((s) => segmentStoreClient(s.address));
});

afterAll(async () => {
  controller?.close();
  for (const s of stores ?? []) s.close();
  await cluster?.[Symbol.asyncDispose]();
});

const createScope = (scope: string) => controller.call<{ created: boolean }>('CreateScope', { scope });
const createTable = (scope: string, table: string, partitionCount: number) => controller.call<{ created: boolean }>('CreateTable', { scope, table, config: { partitionCount } });
const deleteTable = (scope: string, table: string) => controller.call<{ deleted: boolean }>('DeleteTable', { scope, table });
const routing = (scope: string, table: string) => controller.call<Routing>('GetRouting', { scope, table });

async function listAll(scope: string, limit: number): Promise<{ tables: string[]; pages: number }> {
  const tables: string[] = [];
  let token = '';
  let pages = 0;
  do {
    const page = await controller.call<ListTablesResponse>('ListTables', { scope, continuationToken: token, limit });
    tables.push(...page.tables);
    token = page.continuationToken;
    pages++;
  } while (token !== '' && pages < 100);
  return { tables, pages };
}

describe('Controller.CreateTable', () => {
  it('rejects partitionCount 0 and 1025 and the name "123%$" with INVALID_ARGUMENT naming field and limit', async () => {
    await createScope('validation');
    const zero = await failureOf(createTable('validation', 't', 0));
    expect(zero).toMatchObject({ kvtCode: 'INVALID_ARGUMENT', message: 'partitionCount is 0; the minimum is 1' });
    const over = await failureOf(createTable('validation', 't', 1025));
    expect(over).toMatchObject({ kvtCode: 'INVALID_ARGUMENT', message: 'partitionCount is 1025; the maximum is 1024' });
    const name = await failureOf(createTable('validation', '123%$', 1));
    expect(name.kvtCode).toBe('INVALID_ARGUMENT');
    expect(name.message).toMatch(/^table name "123%\$" is invalid: .*\[A-Za-z0-9.-\]\{1,250\}/);
    const scope = await failureOf(createTable('bad scope', 't', 1));
    expect(scope.message).toMatch(/^scope name "bad scope" is invalid/);
    expect((await failureOf(controller.call('GetTable', { scope: 'validation', table: 't' }))).kvtCode).toBe('TABLE_NOT_FOUND');
  });

  it('answers created=true, then created=false for the same name with any config', async () => {
    await createScope('twice');
    expect(await createTable('twice', 'pages', 3)).toEqual({ created: true });
    expect(await createTable('twice', 'pages', 3)).toEqual({ created: false });
    expect(await createTable('twice', 'pages', 8)).toEqual({ created: false });
    const info = await controller.call<TableInfo>('GetTable', { scope: 'twice', table: 'pages' });
    expect(info).toMatchObject({ scope: 'twice', table: 'pages', config: { partitionCount: 3 }, state: 'ACTIVE' });
    expect(Number(info.createdAtMs)).toBeGreaterThan(0);
  });

  it('fails with SCOPE_NOT_FOUND in a missing scope', async () => {
    const failure = await failureOf(createTable('no-such-scope', 't', 1));
    expect(failure).toMatchObject({ kvtCode: 'SCOPE_NOT_FOUND', message: 'scope no-such-scope does not exist' });
  });

  it('spreads the segments over both stores, each store hosting exactly what routing says', async () => {
    await createScope('spread');
    await createTable('spread', 'even', 6);
    const r = await routing('spread', 'even');
    const addresses = cluster.stores.map((s) => s.address);
    expect(new Set(r.partitions.map((p) => p.storeAddress))).toEqual(new Set(addresses));
    for (const [i, address] of addresses.entries()) {
      const hosted = new Set(await storeSegments(stores[i]));
      for (const p of r.partitions) expect(hosted.has(p.segmentId), `segment ${p.segmentId} on ${address}`).toBe(p.storeAddress === address);
    }
    // Placement is least-loaded first over every table, so the two stores' totals differ by at most one.
    const { stores: infos } = await controller.call<ListSegmentStoresResponse>('ListSegmentStores');
    expect(infos).toHaveLength(2);
    expect(Math.abs(infos[0].segmentCount - infos[1].segmentCount)).toBeLessThanOrEqual(1);
    expect(infos.every((s) => s.live)).toBe(true);
  });
});

describe('Controller.DeleteTable', () => {
  it('answers true, then false, and a re-created table starts empty on fresh segments', async () => {
    await createScope('recreate');
    await createTable('recreate', 't', 2);
    const before = await routing('recreate', 't');
    const first = before.partitions[0];
    const owner = stores[cluster.stores.findIndex((s) => s.address === first.storeAddress)];
    await owner.call('Update', {
      segmentId: first.segmentId,
      modifications: [{ type: 'PUT', key: Buffer.from('k'), value: Buffer.from('v') }],
    });
    expect((await owner.call<SegmentInfo>('GetSegmentInfo', { segmentId: first.segmentId })).entryCount).toBe('1');

    expect(await deleteTable('recreate', 't')).toEqual({ deleted: true });
    for (const store of stores) {
      const hosted = await storeSegments(store);
      for (const p of before.partitions) expect(hosted).not.toContain(p.segmentId);
    }
    expect(await deleteTable('recreate', 't')).toEqual({ deleted: false });
    expect(await createTable('recreate', 't', 2)).toEqual({ created: true });

    const after = await routing('recreate', 't');
    const oldIds = new Set(before.partitions.map((p) => p.segmentId));
    for (const p of after.partitions) {
      expect(oldIds.has(p.segmentId)).toBe(false);
      const store = stores[cluster.stores.findIndex((s) => s.address === p.storeAddress)];
      expect((await store.call<SegmentInfo>('GetSegmentInfo', { segmentId: p.segmentId })).entryCount).toBe('0');
    }
  });

  it('answers false in a missing scope', async () => {
    expect(await deleteTable('never-created', 't')).toEqual({ deleted: false });
  });
});

describe('Controller table operations under concurrency', () => {
  it('serializes concurrent creates and deletes of one name: outcomes add up and the stores match the metadata', async () => {
    await createScope('race');
    let balance = 0;
    for (let round = 0; round < 4; round++) {
      const results = await Promise.all([createTable('race', 't', 3), deleteTable('race', 't'), createTable('race', 't', 2), deleteTable('race', 't'), createTable('race', 't', 3)]);
      for (const r of results) balance += 'created' in r ? Number(r.created) : -Number(r.deleted);
      expect(balance === 0 || balance === 1).toBe(true);
    }
    const exists = await controller.call<TableInfo>('GetTable', { scope: 'race', table: 't' }).then(
      () => true,
      () => false,
    );
    expect(exists).toBe(balance === 1);

    // Every segment any store hosts belongs to a table in the metadata, and every partition's segment exists.
    const expected = new Map<string, string>();
    for (const scope of (await controller.call<{ scopes: string[] }>('ListScopes')).scopes) {
      for (const table of (await listAll(scope, 0)).tables) {
        for (const p of (await routing(scope, table)).partitions) expected.set(p.segmentId, p.storeAddress);
      }
    }
    const hosted = new Map<string, string>();
    for (const [i, store] of stores.entries()) for (const id of await storeSegments(store)) hosted.set(id, cluster.stores[i].address);
    expect(hosted).toEqual(expected);
  });
});

describe('Controller.ListTables', () => {
  it('lists nothing in an empty scope', async () => {
    await createScope('empty');
    expect(await controller.call('ListTables', { scope: 'empty' })).toEqual({ tables: [], continuationToken: '' });
  });

  it('shows exactly 4 tables after creating 4 twice, in one page and across pages of 1', async () => {
    await createScope('four');
    const names = ['d', 'b', 'a.2', 'c-1'];
    for (let round = 0; round < 2; round++) for (const n of names) await createTable('four', n, 1);
    const sorted = ['a.2', 'b', 'c-1', 'd'];
    expect(await listAll('four', 0)).toEqual({ tables: sorted, pages: 1 });
    expect(await listAll('four', 1)).toEqual({ tables: sorted, pages: 4 });
    expect((await listAll('four', 3)).tables).toEqual(sorted);
  });

  it('fails with SCOPE_NOT_FOUND for a missing scope and INVALID_ARGUMENT for a forged token', async () => {
    expect((await failureOf(controller.call('ListTables', { scope: 'ghost' }))).kvtCode).toBe('SCOPE_NOT_FOUND');
    const forged = await failureOf(controller.call('ListTables', { scope: 'four', continuationToken: '%%%' }));
    expect(forged.kvtCode).toBe('INVALID_ARGUMENT');
    expect(forged.message).toMatch(/^continuationToken is malformed/);
  });
});

describe('Controller.GetRouting', () => {
  it('covers [0, 1) with contiguous hash ranges i/n .. (i+1)/n', async () => {
    await createScope('ranges');
    await createTable('ranges', 'seven', 7);
    const r = await routing('ranges', 'seven');
    expect(r.partitionCount).toBe(7);
    expect(r.partitions.map((p) => p.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(r.partitions[0].hashLow).toBe(0);
    expect(r.partitions[6].hashHigh).toBe(1);
    for (let i = 0; i < 7; i++) {
      expect(r.partitions[i].hashLow).toBe(i / 7);
      expect(r.partitions[i].hashHigh).toBe((i + 1) / 7);
      if (i > 0) expect(r.partitions[i].hashLow).toBe(r.partitions[i - 1].hashHigh);
      expect(r.partitions[i].storeLive).toBe(true);
    }
    expect(new Set(r.partitions.map((p) => p.segmentId)).size).toBe(7);
    expect(BigInt(r.generation)).toBeGreaterThan(0n);
  });

  it('fails with TABLE_NOT_FOUND for a missing table', async () => {
    await createScope('routing');
    const failure = await failureOf(routing('routing', 'absent'));
    expect(failure).toMatchObject({ kvtCode: 'TABLE_NOT_FOUND', message: 'table routing/absent does not exist' });
  });
});

describe('Controller.UpdateTable', () => {
  it('rejects a change of partitionCount and accepts the same configuration', async () => {
    await createScope('update');
    await createTable('update', 't', 4);
    const change = await failureOf(controller.call('UpdateTable', { scope: 'update', table: 't', config: { partitionCount: 8 } }));
    expect(change.kvtCode).toBe('INVALID_ARGUMENT');
    expect(change.message).toBe('partitionCount cannot change: table update/t has 4 partitions; the update asks for 8');
    const same = await controller.call<TableInfo>('UpdateTable', { scope: 'update', table: 't', config: { partitionCount: 4 } });
    expect(same).toMatchObject({ config: { partitionCount: 4 }, state: 'ACTIVE' });
    const missing = await failureOf(controller.call('UpdateTable', { scope: 'update', table: 'gone', config: { partitionCount: 4 } }));
    expect(missing.kvtCode).toBe('TABLE_NOT_FOUND');
  });
});

describe('Controller scopes', () => {
  it('creates once, lists sorted, refuses to delete a scope holding tables, then deletes it', async () => {
    expect(await createScope('zz-scope')).toEqual({ created: true });
    expect(await createScope('zz-scope')).toEqual({ created: false });
    await createScope('aa-scope');
    const { scopes } = await controller.call<{ scopes: string[] }>('ListScopes');
    expect(scopes).toEqual([...scopes].sort());
    expect(scopes).toEqual(expect.arrayContaining(['aa-scope', 'zz-scope']));

    await createTable('zz-scope', 't', 1);
    const refused = await failureOf(controller.call('DeleteScope', { scope: 'zz-scope' }));
    expect(refused).toMatchObject({ kvtCode: 'INVALID_ARGUMENT', message: 'scope zz-scope holds 1 table(s); delete them before the scope' });
    await deleteTable('zz-scope', 't');
    expect(await controller.call('DeleteScope', { scope: 'zz-scope' })).toEqual({ deleted: true });
    expect(await controller.call('DeleteScope', { scope: 'zz-scope' })).toEqual({ deleted: false });
  });
});

describe('Controller segment-store registry', () => {
  it('marks a killed store dead, and live again with the same id, its segments and its new address', async () => {
    using dir = tempDir('kvt-registry-');
    const ctl = await startController(path.join(dir.path, 'controller'), ['--heartbeat-interval-ms', '200', '--store-timeout-ms', '1500']);
    const procs: KvtProcess[] = [];
    const client = controllerClient(ctl.address);
    try {
      for (const i of [0, 1]) {
        procs.push(await startSegmentStore(path.join(dir.path, `store-${i}`), ctl.address));
        await procs[i].waitForLog('registered with controller');
      }
      await client.call('CreateScope', { scope: 'reg' });
      await client.call('CreateTable', { scope: 'reg', table: 't', config: { partitionCount: 4 } });
      const before = await client.call<Routing>('GetRouting', { scope: 'reg', table: 't' });
      const victim = before.partitions[0];
      const index = procs.findIndex((p) => p.address === victim.storeAddress);
      await procs[index].kill('SIGKILL');

      const dead = await waitFor('the killed store to be marked dead', async () => {
        const r = await client.call<Routing>('GetRouting', { scope: 'reg', table: 't' });
        return r.partitions.some((p) => p.storeId === victim.storeId && !p.storeLive) ? r : undefined;
      });
      expect(dead.generation).not.toBe(before.generation);
      expect(dead.partitions.filter((p) => p.storeId !== victim.storeId).every((p) => p.storeLive)).toBe(true);

      procs[index] = await startSegmentStore(path.join(dir.path, `store-${index}`), ctl.address);
      await procs[index].waitForLog('registered with controller');
      const back = await waitFor('the store to be live again', async () => {
        const r = await client.call<Routing>('GetRouting', { scope: 'reg', table: 't' });
        return r.partitions.every((p) => p.storeLive) ? r : undefined;
      });
      const moved = back.partitions.filter((p) => p.storeId === victim.storeId);
      expect(moved.length).toBeGreaterThan(0);
      for (const p of moved) expect(p.storeAddress).toBe(procs[index].address);
      expect(back.partitions.map((p) => [p.segmentId, p.storeId])).toEqual(before.partitions.map((p) => [p.segmentId, p.storeId]));
      const returned = segmentStoreClient(procs[index].address);
      try {
        const hosted = await storeSegments(returned);
        for (const p of moved) expect(hosted).toContain(p.segmentId);
      } finally {
        returned.close();
      }
      const { stores: infos } = await client.call<ListSegmentStoresResponse>('ListSegmentStores');
      expect(infos.map((s) => s.storeId).sort()).toEqual([...new Set(before.partitions.map((p) => p.storeId))].sort());
    } finally {
      client.close();
      await Promise.all(procs.map((p) => p.stop()));
      await ctl.stop();
    }
  });
});
