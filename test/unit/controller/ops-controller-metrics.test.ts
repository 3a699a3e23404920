/**
 * The controller's own gauges (controller/ops/controller-metrics.ts), read from a prom-client registry
 * over the controller's real parts: a metadata store on LevelDB, the store registry on a clock the
 * test moves, segment stores in this process.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerControllerMetrics } from '../../../controller/ops/controller-metrics';
import { ControllerParts } from './controller-parts';

/** Every series of the registry as "name{label=value,…}" → value. */
async function seriesOf(parts: ControllerParts): Promise<Record<string, number>> {
  const registry = new Registry();
  registerControllerMetrics(registry, parts.meta, parts.registry);
  const out: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const v of metric.values) {
      const labels = Object.entries(v.labels).map(([k, l]) => `${k}=${String(l)}`);
      out[`${metric.name}${labels.length > 0 ? `{${labels.join(',')}}` : ''}`] = v.value;
    }
  }
  return out;
}

describe('registerControllerMetrics', () => {
  it('counts stores by liveness, scopes, tables by state (0 for a state none is in), and the partitions of ACTIVE tables on dead stores', async () => {
    await using parts = await ControllerParts.start();
    const kept = await parts.startStore();
    const dead = await parts.startStore();
    for (const t of ['t', 'u', 'gone']) expect(await parts.ops.create('s', t, 2)).toBe(true);
    await parts.killStoresBut(kept);
    // Its segment on the dead store cannot be deleted: the table stays DELETING.
    await expect(parts.ops.delete('s', 'gone')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const onDead = (t: string) => parts.meta.getTable('s', t)!.partitions.filter((p) => p.storeId === dead.storeId).length;
    expect([onDead('t'), onDead('u'), onDead('gone')]).toEqual([1, 1, 1]);

    expect(await seriesOf(parts)).toEqual({
      'kvt_controller_segment_stores{state=live}': 1,
      'kvt_controller_segment_stores{state=dead}': 1,
      kvt_controller_scopes: 1,
      'kvt_controller_tables{state=CREATING}': 0,
      'kvt_controller_tables{state=ACTIVE}': 2,
      'kvt_controller_tables{state=DELETING}': 1,
      kvt_controller_partitions_on_dead_stores: 2,
    });
  });

  it("judges a partition whose replacement does not exist yet by the replaced segment's dead store", async () => {
    await using parts = await ControllerParts.start();
    // As in StoreRemoval's test: the replacement on `b` (live, unreachable) is never created.
    await parts.registerUnreachable('a');
    await parts.meta.createTable({ scope: 's', table: 't', owners: ['a'], nowMs: 0 });
    await parts.meta.transitionTable('s', 't', 'ACTIVE');
    await parts.killStoresBut();
    await parts.registerUnreachable('b');
    await parts.removal.remove('a', true);
    expect(parts.meta.getTable('s', 't')!.partitions[0]).toMatchObject({ storeId: 'b', replaces: { storeId: 'a' } });

    const series = await seriesOf(parts);
    expect(series['kvt_controller_segment_stores{state=live}']).toBe(1);
    expect(series.kvt_controller_partitions_on_dead_stores).toBe(1);
  });
});
