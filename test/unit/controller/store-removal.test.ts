import { describe, expect, it } from 'vitest';
import { ControllerParts } from './controller-parts';

describe('StoreRemoval', () => {
  it('refuses without force a dead store holding ACTIVE data, changes nothing, and gives the store back', async () => {
    await using parts = await ControllerParts.start();
    const kept = await parts.startStore();
    const dead = await parts.startStore();
    expect(await parts.ops.create('s', 't', 2)).toBe(true);
    const before = parts.meta.getTable('s', 't')!;
    const index = before.partitions.find((p) => p.storeId === dead.storeId)!.index;
    await parts.killStoresBut(kept);

    await expect(parts.removal.remove(dead.storeId, false)).rejects.toMatchObject({
      code: 'SEGMENT_STORE_HOLDS_DATA',
      message:
        `segment store ${dead.storeId} holds the only copy of 1 partition of ACTIVE tables: s/t (partition ${index}); ` +
        'removing it loses their data: remove it with force to give them new, empty segments on live stores',
    });
    expect(parts.meta.getStore(dead.storeId)).toBeDefined();
    expect(parts.meta.getRemovedStore(dead.storeId)).toBeUndefined();
    expect(parts.meta.getTable('s', 't')).toBe(before);
    // The refused removal no longer claims the store: it comes back to life with its next heartbeat.
    expect(await parts.registry.heartbeat(dead.storeId, dead.address)).toBe(true);
    expect(parts.registry.isLive(dead.storeId)).toBe(true);
  });

  it('counts the segments of the removed store as deleted: a table left DELETING on it is finished by the removal', async () => {
    await using parts = await ControllerParts.start();
    const kept = await parts.startStore();
    const dead = await parts.startStore();
    expect(await parts.ops.create('s', 't', 2)).toBe(true);
    await parts.killStoresBut(kept);
    await expect(parts.ops.delete('s', 't')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await parts.segmentsOn(kept)).toEqual([]);

    expect(await parts.removal.remove(dead.storeId, false)).toEqual({
      removed: true,
      address: dead.address,
      lostPartitions: [],
      placedPartitions: [],
      deletingTables: [{ scope: 's', table: 't' }],
      unfinishedTables: [],
    });
    expect(parts.meta.getTable('s', 't')).toBeUndefined();
    expect(parts.meta.getStore(dead.storeId)).toBeUndefined();
  });

  it('removes without force a store that holds only a replacement segment not yet in use, and moves the replacement on', async () => {
    await using parts = await ControllerParts.start();
    // Partition 0 of an ACTIVE table on store `a`; `a` dies with its data.
    await parts.registerUnreachable('a');
    await parts.meta.createTable({ scope: 's', table: 't', owners: ['a'], nowMs: 0 });
    await parts.meta.transitionTable('s', 't', 'ACTIVE');
    const [original] = parts.segmentsOf('t');
    await parts.killStoresBut();
    // Store `b` is live but unreachable: the forced removal of `a` gives the partition a replacement
    // segment there, which cannot be created, so routing keeps the original segment.
    await parts.registerUnreachable('b');
    const first = await parts.removal.remove('a', true);
    const replacement = String(Number(original) + 1);
    expect(first).toMatchObject({
      removed: true,
      lostPartitions: [{ scope: 's', table: 't', partition: 0, segmentId: original, newSegmentId: replacement, newStoreId: 'b' }],
      placedPartitions: [],
      unfinishedTables: [{ scope: 's', table: 't' }],
    });
    expect(parts.meta.getTable('s', 't')?.partitions).toEqual([{ index: 0, segmentId: replacement, storeId: 'b', replaces: { segmentId: original, storeId: 'a' } }]);

    // `b` dies before the replacement exists: it holds no data, so no force is needed.
    await parts.killStoresBut();
    const c = await parts.startStore();
    const second = await parts.removal.remove('b', false);
    const next = String(Number(replacement) + 1);
    expect(second).toMatchObject({
      removed: true,
      lostPartitions: [],
      placedPartitions: [{ scope: 's', table: 't', partition: 0, segmentId: replacement, newSegmentId: next, newStoreId: c.storeId }],
      unfinishedTables: [],
    });
    expect(parts.meta.getTable('s', 't')).toMatchObject({ state: 'ACTIVE', partitions: [{ index: 0, segmentId: next, storeId: c.storeId }] });
    expect(await parts.segmentsOn(c)).toEqual([next]);
  });
});
