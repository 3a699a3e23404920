import { describe, expect, it } from 'vitest';
import { ControllerParts } from './controller-parts';

/** A request that waits out a dead store must give up within create-wait-ms (300 ms here), not hang. */
const BOUNDED = 15_000;

describe('TableOperations', () => {
  it('deletes every segment on its store before it answers true, and then answers false', async () => {
    await using parts = await ControllerParts.start();
    const store = await parts.startStore();
    expect(await parts.ops.create('s', 't', 3)).toBe(true);
    const segments = parts.segmentsOf('t');
    expect(await parts.segmentsOn(store)).toEqual(segments);

    expect(await parts.ops.delete('s', 't')).toBe(true);
    expect(await parts.segmentsOn(store)).toEqual([]);
    expect(parts.meta.getTable('s', 't')).toBeUndefined();
    expect(await parts.ops.delete('s', 't')).toBe(false);
  });

  it(
    'leaves a table DELETING when its store is dead, and finishes the delete when DeleteTable is asked again',
    async () => {
      await using parts = await ControllerParts.start();
      const store = await parts.startStore();
      expect(await parts.ops.create('s', 't', 2)).toBe(true);
      const segments = parts.segmentsOf('t');
      await parts.killStoresBut();

      await expect(parts.ops.delete('s', 't')).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: `table s/t stays DELETING: 2 of 2 segments could not be deleted (segment store ${store.storeId} is not live); the controller finishes it when the stores are reachable`,
      });
      expect(parts.meta.getTable('s', 't')?.state).toBe('DELETING');
      expect(await parts.segmentsOn(store)).toEqual(segments);

      await parts.heartbeat(store);
      expect(await parts.ops.delete('s', 't')).toBe(true);
      expect(parts.meta.getTable('s', 't')).toBeUndefined();
      expect(await parts.segmentsOn(store)).toEqual([]);
    },
    BOUNDED,
  );

  it(
    'creates a table anew over one left DELETING once the old segments are gone, never answering "exists"',
    async () => {
      await using parts = await ControllerParts.start();
      const store = await parts.startStore();
      expect(await parts.ops.create('s', 't', 1)).toBe(true);
      const old = parts.segmentsOf('t');
      await parts.killStoresBut();
      await expect(parts.ops.delete('s', 't')).rejects.toMatchObject({ code: 'UNAVAILABLE' });

      // The old segments cannot be deleted yet: the create fails, and the table stays DELETING.
      await expect(parts.ops.create('s', 't', 2)).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: expect.stringMatching(/^table s\/t stays DELETING: 1 of 1 segments could not be deleted/),
      });
      expect(parts.meta.getTable('s', 't')).toMatchObject({ state: 'DELETING', partitionCount: 1 });

      await parts.heartbeat(store);
      expect(await parts.ops.create('s', 't', 2)).toBe(true);
      expect(parts.meta.getTable('s', 't')).toMatchObject({ state: 'ACTIVE', partitionCount: 2 });
      const fresh = parts.segmentsOf('t');
      expect(fresh.some((id) => old.includes(id))).toBe(false);
      expect(await parts.segmentsOn(store)).toEqual(fresh);
    },
    BOUNDED,
  );

  it(
    'finishes a table a crashed controller left CREATING when it is created again with its partition count; another count answers false',
    async () => {
      await using parts = await ControllerParts.start();
      const store = await parts.startStore();
      // What a controller killed after persisting CREATING leaves: metadata, no segments.
      await parts.meta.createTable({ scope: 's', table: 't', owners: [store.storeId, store.storeId], nowMs: 0 });
      await parts.killStoresBut();

      expect(await parts.ops.create('s', 't', 3)).toBe(false);
      await expect(parts.ops.create('s', 't', 2)).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: `table s/t stays CREATING: 2 of 2 segments could not be created (segment store ${store.storeId} is not live); the controller finishes it when the stores are reachable`,
      });
      expect(parts.meta.getTable('s', 't')?.state).toBe('CREATING');
      expect(await parts.segmentsOn(store)).toEqual([]);

      await parts.heartbeat(store);
      expect(await parts.ops.create('s', 't', 3)).toBe(false);
      expect(parts.meta.getTable('s', 't')?.state).toBe('CREATING');
      expect(await parts.ops.create('s', 't', 2)).toBe(true);
      expect(parts.meta.getTable('s', 't')?.state).toBe('ACTIVE');
      expect(await parts.segmentsOn(store)).toEqual(parts.segmentsOf('t'));
      expect(await parts.ops.create('s', 't', 2)).toBe(false);
    },
    BOUNDED,
  );
});
