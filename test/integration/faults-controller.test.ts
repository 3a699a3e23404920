/**
 * SIGKILL of the controller (real processes, loopback): the data plane keeps working on the routing
 * the clients cached (reads and writes go straight to the segment stores), control-plane calls fail
 * with UnavailableError instead of hanging, and after a restart on the same port (the stores
 * heartbeat to a fixed address) every scope, table, configuration and routing is intact and table
 * creation works again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers, UnavailableError } from '../../client';
import { fetchRouting } from '../harness/oracle';
import { MixedLoad, partialBatches, readAll } from '../harness/load';
import { WriteOracle } from '../harness/oracle';
import { TestCluster } from '../harness/process';

/** Short deadlines so calls during the outage fail fast; enough retries to outlast one reconnect backoff (≤ 1 s). */
const CLIENT = { timeoutMs: 3_000, retry: { maxRetries: 8, initialBackoffMs: 50, maxBackoffMs: 400 } };
const TABLES = [
  ['ctl-a', 'one', 1],
  ['ctl-a', 'four', 4],
  ['ctl-b', 'eight', 8],
] as const;

async function listAll(manager: KeyValueTableManager, scope: string): Promise<string[]> {
  const names: string[] = [];
  for await (const t of manager.listKeyValueTables(scope)) names.push(t.name);
  return names.sort();
}

async function listScopes(manager: KeyValueTableManager): Promise<string[]> {
  const names: string[] = [];
  for await (const s of manager.listScopes()) names.push(s);
  return names.sort();
}

describe('the controller killed while clients work', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('keeps the data plane serving on cached routing and restarts with all metadata intact', async () => {
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress, ...CLIENT });
    await using factory = KeyValueTableFactory.withScope('ctl-b', { controller: cluster.controllerAddress, ...CLIENT });
    try {
      for (const [scope, name, partitionCount] of TABLES) {
        await manager.createScope(scope);
        await manager.createKeyValueTable(scope, name, { partitionCount });
      }
      const scopesBefore = await listScopes(manager);
      const tablesBefore = { a: await listAll(manager, 'ctl-a'), b: await listAll(manager, 'ctl-b') };
      const routingBefore = await fetchRouting(cluster.controllerAddress, 'ctl-b', 'eight');
      const table = factory.forKeyValueTable('eight', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      const oracle = new WriteOracle();
      const load = new MixedLoad([table], oracle, 8, 11);
      expect((await load.run(10, 10_000)).filter((op) => !op.ok)).toEqual([]); // caches the routing

      const port = cluster.controller.port;
      await cluster.controller.kill('SIGKILL');

      // Data plane: cached routing, straight to the stores.
      const whileDown = await load.run(25, 10_000);
      expect(whileDown.filter((op) => !op.ok).map((op) => String(op.error))).toEqual([]);
      // Control plane: a typed error within the deadline, never a hang.
      await expect(manager.createKeyValueTable('ctl-a', 'later', { partitionCount: 2 })).rejects.toBeInstanceOf(UnavailableError);
      await expect(manager.getKeyValueTableConfiguration('ctl-a', 'four')).rejects.toBeInstanceOf(UnavailableError);
      await using fresh = KeyValueTableFactory.withScope('ctl-b', { controller: `127.0.0.1:${port}`, ...CLIENT });
      const uncached = fresh.forKeyValueTable('eight', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      await expect(uncached.get('x', 'y')).rejects.toBeInstanceOf(UnavailableError);

      await cluster.restartController(port);
      await cluster.controller.waitForLog('controller started');
      expect(await listScopes(manager)).toEqual(scopesBefore);
      expect({ a: await listAll(manager, 'ctl-a'), b: await listAll(manager, 'ctl-b') }).toEqual(tablesBefore);
      for (const [scope, name, partitionCount] of TABLES) {
        expect((await manager.getKeyValueTableConfiguration(scope, name)).partitionCount).toBe(partitionCount);
      }
      const routingAfter = await fetchRouting(cluster.controllerAddress, 'ctl-b', 'eight');
      expect(routingAfter.partitions.map((p) => [p.index, p.segmentId, p.storeId])).toEqual(routingBefore.partitions.map((p) => [p.index, p.segmentId, p.storeId]));

      // Table creation works again once the stores' heartbeats reach the new controller (bounded).
      // New segments go only to stores heard from since the restart, so this create may wait for a
      // store's next registration (its retry pace grew while the controller was down): the call gets
      // the client's default deadline, longer than the controller's create wait, not this test's 3 s.
      await using patient = new KeyValueTableManager({ controller: cluster.controllerAddress, retry: CLIENT.retry });
      expect(await createWithin(patient, 'ctl-a', 'later', 20_000)).toBe(true);
      const later = fresh.forKeyValueTable('later', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      await expect(later.get('x', 'y')).rejects.toThrow(); // ctl-b has no table "later": its own error
      await using factoryA = KeyValueTableFactory.withScope('ctl-a', { controller: cluster.controllerAddress, ...CLIENT });
      const created = factoryA.forKeyValueTable('later', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      await created.put('f', 'k', 'v');
      expect((await created.get('f', 'k'))?.value).toBe('v');
      expect(await uncached.get('x', 'y')).toBeNull(); // the fresh handle finds the routing now

      const data = await readAll(table);
      expect(oracle.check(data)).toEqual([]);
      expect(partialBatches(data, 8)).toEqual([]);
      expect(oracle.versionRegressions).toEqual([]);
    } finally {
      await manager.close();
    }
  }, 90_000);
});

/** Creates a table, retrying UnavailableError (the stores re-register with the restarted controller) a bounded number of times. */
async function createWithin(manager: KeyValueTableManager, scope: string, name: string, budgetMs: number): Promise<boolean> {
  const end = Date.now() + budgetMs;
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      return await manager.createKeyValueTable(scope, name, { partitionCount: 2 });
    } catch (err) {
      if (!(err instanceof UnavailableError) || Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`could not create ${scope}/${name} after 50 attempts`);
}
