/**
 * The status page's data (controller/ops/cluster-status.ts) from the controller's real parts: a
 * metadata store on LevelDB, the store registry on a clock the test moves, and segment stores in this
 * process whose figures are read over gRPC.
 */
import { describe, expect, it } from 'vitest';
import { clusterStatus } from '../../../controller/ops/cluster-status';
import { StoreRates } from '../../../controller/ops/store-rates';
import { ControllerParts, STORE_TIMEOUT_MS } from './controller-parts';

function statusOf(parts: ControllerParts) {
  const rates = new StoreRates((address, names, timeoutMs) => parts.clients.metrics(address, names, timeoutMs));
  return clusterStatus({ meta: parts.meta, registry: parts.registry, rates, storeTimeoutMs: STORE_TIMEOUT_MS, refreshMs: 1_000, clock: () => 42 });
}

describe('clusterStatus', () => {
  it('shows live and dead stores with their segments and figures, each partition with its store and whether it is live, and counts them', async () => {
    await using parts = await ControllerParts.start();
    const kept = await parts.startStore();
    const dead = await parts.startStore();
    expect(await parts.ops.create('s', 't', 2)).toBe(true);
    expect(await parts.ops.create('s', 'u', 2)).toBe(true);
    await parts.killStoresBut(kept);

    const status = await statusOf(parts);
    expect(status).toMatchObject({ generatedAtMs: 42, storeTimeoutMs: STORE_TIMEOUT_MS, refreshMs: 1_000 });
    const onDead = ['t', 'u'].flatMap((t) => parts.meta.getTable('s', t)!.partitions.filter((p) => p.storeId === dead.storeId));
    expect(onDead).toHaveLength(2);
    expect(status.summary).toEqual({ liveStores: 1, deadStores: 1, scopes: 1, tables: 2, partitionsOnDeadStores: 2 });
    const byId = new Map(status.stores.map((s) => [s.id, s]));
    // The live store was asked for its figures; the dead one was not (it has none).
    expect(byId.get(kept.storeId)).toMatchObject({ address: kept.address, live: true, segments: 2, entries: 0, bytes: 0, operations: { update: 0, get: 0, iterate: 0, scan: 0 } });
    expect(byId.get(dead.storeId)).toEqual({ id: dead.storeId, address: dead.address, live: false, lastHeartbeatAgeMs: STORE_TIMEOUT_MS + 1, segments: 2 });

    expect(status.scopes.map((s) => [s.name, s.tables.map((t) => [t.name, t.state, t.partitionCount])])).toEqual([
      [
        's',
        [
          ['t', 'ACTIVE', 2],
          ['u', 'ACTIVE', 2],
        ],
      ],
    ]);
    for (const table of status.scopes[0].tables) {
      const record = parts.meta.getTable('s', table.name)!;
      expect(table.partitions).toEqual(
        record.partitions.map((p, i) => ({
          index: i,
          hashLow: i / 2,
          hashHigh: (i + 1) / 2,
          segment: p.segmentId,
          storeId: p.storeId,
          storeAddress: p.storeId === kept.storeId ? kept.address : dead.address,
          storeLive: p.storeId === kept.storeId,
        })),
      );
    }
  });

  it('names the segment routing uses: the replaced one, on its dead store, until the replacement exists', async () => {
    await using parts = await ControllerParts.start();
    // As in StoreRemoval's test: partition 0 on `a`, which dies; the forced removal of `a` gives it a
    // replacement on `b`, live but unreachable, so the replacement is never created.
    await parts.registerUnreachable('a');
    await parts.meta.createTable({ scope: 's', table: 't', owners: ['a'], nowMs: 0 });
    await parts.meta.transitionTable('s', 't', 'ACTIVE');
    const [original] = parts.segmentsOf('t');
    const addressOfA = parts.meta.storeAddress('a');
    await parts.killStoresBut();
    await parts.registerUnreachable('b');
    await parts.removal.remove('a', true);
    expect(parts.meta.getTable('s', 't')!.partitions[0].replaces).toEqual({ segmentId: original, storeId: 'a' });

    const status = await statusOf(parts);
    expect(status.scopes[0].tables[0].partitions).toEqual([{ index: 0, hashLow: 0, hashHigh: 1, segment: original, storeId: 'a', storeAddress: addressOfA, storeLive: false }]);
    expect(status.summary).toEqual({ liveStores: 1, deadStores: 0, scopes: 1, tables: 1, partitionsOnDeadStores: 1 });
    // `b` could not be asked for its figures: the status says why.
    expect(status.stores).toEqual([expect.objectContaining({ id: 'b', live: true, segments: 1, error: expect.stringMatching(/\S/) })]);
  });
});
