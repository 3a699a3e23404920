import { describe, expect, it } from 'vitest';
import { Resumer } from '../../../controller/service/resumer';
import { silentLogger } from '../../../server-kit/log';
import { ControllerParts, eventually } from './controller-parts';

describe('Resumer', () => {
  it('finishes tables left CREATING and DELETING by a dead store on a later pass, once the store is back', async () => {
    await using parts = await ControllerParts.start();
    const store = await parts.startStore();
    expect(await parts.ops.create('s', 'doomed', 1)).toBe(true);
    const doomed = parts.segmentsOf('doomed');
    // What a controller killed midway leaves: a create with no segments yet, a delete with its segments.
    await parts.meta.createTable({ scope: 's', table: 'new', owners: [store.storeId, store.storeId], nowMs: 0 });
    await parts.meta.transitionTable('s', 'doomed', 'DELETING');
    await parts.killStoresBut();

    const resumer = new Resumer(parts.meta, parts.ops, 50, silentLogger);
    resumer.start();
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(parts.meta.getTable('s', 'new')?.state).toBe('CREATING');
      expect(parts.meta.getTable('s', 'doomed')?.state).toBe('DELETING');

      // No kick: the store's return is found by the periodic passes.
      await parts.heartbeat(store);
      await eventually('both tables finished', () => parts.meta.getTable('s', 'new')?.state === 'ACTIVE' && parts.meta.getTable('s', 'doomed') === undefined);
      expect(await parts.segmentsOn(store)).toEqual(parts.segmentsOf('new'));
      expect(parts.segmentsOf('new').some((id) => doomed.includes(id))).toBe(false);
    } finally {
      await resumer.stop();
    }
  });

  it('runs another pass right after the running one when kicked during it, not an interval later', async () => {
    // Sequential segment calls with a pause: a pass over two partitions takes over half a second.
    await using parts = await ControllerParts.start({ pauseAfterSegmentMs: 300 });
    const store = await parts.startStore();
    await parts.meta.createTable({ scope: 's', table: 't', owners: [store.storeId, store.storeId], nowMs: 0 });
    await parts.killStoresBut();

    const resumer = new Resumer(parts.meta, parts.ops, 60_000, silentLogger);
    resumer.start();
    try {
      // The first pass found partition 0's store dead; the store returns while the pass goes on.
      await new Promise((r) => setTimeout(r, 100));
      await parts.heartbeat(store);
      resumer.kick();
      await eventually('the table finished by a second pass', () => parts.meta.getTable('s', 't')?.state === 'ACTIVE', 4_000);
      expect(await parts.segmentsOn(store)).toEqual(parts.segmentsOf('t'));
    } finally {
      await resumer.stop();
    }
  });
});
