import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MetadataStore } from '../../../controller/metadata/metadata-store';
import { StoreRegistry } from '../../../controller/service/store-registry';
import { silentLogger } from '../../../server-kit/log';
import { KvtFault } from '../../../server-kit/fault';
import { tempDir } from '../../harness/process';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A registry over a real metadata store, with a clock the test moves. */
async function setup(dataDir?: string, startMs = 1_000_000) {
  const dir = tempDir('kvt-registry-unit-');
  const where = dataDir ?? path.join(dir.path, 'c');
  const meta = await MetadataStore.open(where);
  const clock = { now: startMs };
  const registry = new StoreRegistry(meta, { heartbeatIntervalMs: 100, storeTimeoutMs: 500, clock: () => clock.now }, silentLogger);
  registry.start();
  cleanup.push(
    () => dir.dispose(),
    () => meta.close(),
    () => registry.stop(),
  );
  return { meta, registry, clock, where };
}

/** A registry that knew `stores` (id → address), restarted a minute after their last heartbeat. */
async function restartedAfter(stores: Record<string, string>) {
  const first = await setup();
  for (const [id, address] of Object.entries(stores)) await first.registry.register(id, address);
  first.registry.stop();
  await first.meta.close();
  return setup(first.where, first.clock.now + 60_000);
}

describe('StoreRegistry', () => {
  it('marks a store dead after the timeout and live again on its next heartbeat, bumping the generation each time', async () => {
    const { meta, registry, clock } = await setup();
    await registry.register('s1', '127.0.0.1:1');
    expect(registry.isLive('s1')).toBe(true);
    const g1 = BigInt(meta.generation);

    clock.now += 501;
    await registry.refreshLiveness();
    expect(registry.isLive('s1')).toBe(false);
    expect(registry.list()[0]).toMatchObject({ storeId: 's1', live: false });
    const g2 = BigInt(meta.generation);
    expect(g2).toBeGreaterThan(g1);

    expect(await registry.heartbeat('s1', '127.0.0.1:1')).toBe(true);
    expect(registry.isLive('s1')).toBe(true);
    expect(BigInt(meta.generation)).toBeGreaterThan(g2);
  });

  it('returns from a liveness check only once the generation of a change seen by a concurrent check is durable', async () => {
    const { meta, registry, clock } = await setup();
    await registry.register('s1', '127.0.0.1:1');
    const g = BigInt(meta.generation);
    clock.now += 501;
    // The first check sees the death and starts the bump; the second sees no change against it, but
    // must not return (GetRouting then reads the generation) before that bump is written.
    const first = registry.refreshLiveness();
    await registry.refreshLiveness();
    expect(BigInt(meta.generation)).toBe(g + 1n);
    await first;
  });

  it('answers known=false to an unknown store', async () => {
    const { registry } = await setup();
    expect(await registry.heartbeat('ghost', '127.0.0.1:9')).toBe(false);
    expect(registry.list()).toEqual([]);
  });

  it('keeps one process per id: another address is refused while the id is live, and takes it over once the id falls silent', async () => {
    const { meta, registry, clock } = await setup();
    await registry.register('s1', '127.0.0.1:1');
    const g = BigInt(meta.generation);

    // A second process with the same id (a copied data directory): refused, naming both addresses.
    const refused = await registry.register('s1', '127.0.0.1:2').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(KvtFault);
    expect((refused as KvtFault).code).toBe('UNAVAILABLE');
    expect((refused as KvtFault).message).toMatch(/s1 is live at 127\.0\.0\.1:1 .*127\.0\.0\.1:2 cannot take it until .*500 ms/);
    // Its heartbeats (had it any) are not taken either; the holder's are.
    expect(await registry.heartbeat('s1', '127.0.0.1:2')).toBe(false);
    expect(await registry.heartbeat('s1', '127.0.0.1:1')).toBe(true);
    expect(meta.getStore('s1')?.address).toBe('127.0.0.1:1');
    expect(BigInt(meta.generation)).toBe(g);

    expect((refused as KvtFault).retryAfterMs).toBe(500 + 20);

    // The first process stops. 200 ms later the refusal names the wait that is left (plus a 20 ms
    // margin); once that has passed, the id is dead and the store at the new address takes it (it
    // moved), keeping its segments, with a new generation.
    clock.now += 200;
    const again = await registry.register('s1', '127.0.0.1:2').then(
      () => undefined,
      (err: unknown) => err as KvtFault,
    );
    expect(again?.retryAfterMs).toBe(300 + 20);
    clock.now += again!.retryAfterMs!;
    await registry.refreshLiveness();
    await registry.register('s1', '127.0.0.1:2');
    expect(meta.getStore('s1')?.address).toBe('127.0.0.1:2');
    expect(registry.isLive('s1')).toBe(true);
    expect(BigInt(meta.generation)).toBeGreaterThan(g);
    expect(registry.list().map((s) => s.storeId)).toEqual(['s1']);
    // Now the old address is the stranger.
    expect(await registry.heartbeat('s1', '127.0.0.1:1')).toBe(false);
  });

  it('lets a store back on a new address after a restart take its id at once (the old one only had grace)', async () => {
    // The whole cluster restarted; the store comes back on another port before its old address's grace ends.
    const again = await restartedAfter({ s1: '127.0.0.1:1' });
    expect(again.registry.isLive('s1')).toBe(true);
    await again.registry.register('s1', '127.0.0.1:11');
    expect(again.meta.getStore('s1')?.address).toBe('127.0.0.1:11');
    // From now on it holds the id.
    await expect(again.registry.register('s1', '127.0.0.1:1')).rejects.toThrow('s1 is live at 127.0.0.1:11');
  });

  it('places new segments only on stores heard from since a restart, while routing keeps the grace', async () => {
    const again = await restartedAfter({ s1: '127.0.0.1:1', s2: '127.0.0.1:2' });
    expect(again.registry.liveStoreIds()).toEqual(['s1', 's2']);
    expect(again.registry.placeableStoreIds()).toEqual([]);
    expect(await again.registry.waitForPlaceableStore(again.clock.now)).toBe(false);
    expect(await again.registry.heartbeat('s2', '127.0.0.1:2')).toBe(true);
    expect(again.registry.placeableStoreIds()).toEqual(['s2']);
    expect(await again.registry.waitForPlaceableStore(again.clock.now)).toBe(true);
    // Heard from, then silent past the timeout: no longer placeable either.
    again.clock.now += 501;
    expect(again.registry.placeableStoreIds()).toEqual([]);
  });

  it('gives the stores it remembers a grace period after a restart', async () => {
    // Long after the last persisted heartbeat: the new registry counts from its own start.
    const again = await restartedAfter({ s1: '127.0.0.1:1' });
    expect(again.registry.isLive('s1')).toBe(true);
    again.clock.now += 501;
    expect(again.registry.isLive('s1')).toBe(false);
  });

  it('claims only a dead store for removal; while claimed it cannot register or heartbeat; once removed it is refused for good', async () => {
    const { meta, registry, clock } = await setup();
    await registry.register('s1', '127.0.0.1:1');
    let live: unknown;
    try {
      registry.claimForRemoval('s1', '127.0.0.1:1');
    } catch (err) {
      live = err;
    }
    expect(live).toBeInstanceOf(KvtFault);
    expect((live as KvtFault).code).toBe('SEGMENT_STORE_LIVE');
    expect((live as KvtFault).message).toMatch(/^segment store s1 at 127\.0\.0\.1:1 is live \(heard from \d+ ms ago\); only a store not heard from for 500 ms can be removed: stop it first$/);

    clock.now += 501;
    registry.claimForRemoval('s1', '127.0.0.1:1');
    expect(await registry.heartbeat('s1', '127.0.0.1:1')).toBe(false);
    await expect(registry.register('s1', '127.0.0.1:1')).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'segment store s1 is being removed from the cluster' });
    expect(registry.isLive('s1')).toBe(false);
    // A removal that was not written gives the store back.
    registry.releaseClaim('s1');
    await registry.register('s1', '127.0.0.1:1');
    expect(registry.isLive('s1')).toBe(true);

    clock.now += 501;
    registry.claimForRemoval('s1', '127.0.0.1:1');
    await meta.removeStore({ storeId: 's1', nowMs: clock.now, basis: [], newOwners: new Map() });
    registry.forget('s1');
    const removed = {
      code: 'SEGMENT_STORE_REMOVED',
      message: 'segment store s1 was removed from the cluster; its data directory holds segments no table uses any more: wipe it and start the store again to join as a new store',
    };
    await expect(registry.register('s1', '127.0.0.1:1')).rejects.toMatchObject(removed);
    await expect(registry.register('s1', '127.0.0.1:9')).rejects.toMatchObject(removed);
    expect(await registry.heartbeat('s1', '127.0.0.1:1')).toBe(false);
    expect(registry.list()).toEqual([]);
  });

  it('tells a store counted live only for the grace after a restart so, when its removal is asked for', async () => {
    const again = await restartedAfter({ s1: '127.0.0.1:1' });
    expect(() => again.registry.claimForRemoval('s1', '127.0.0.1:1')).toThrow(
      /^segment store s1 at 127\.0\.0\.1:1 is live \(not heard from since the controller started 0 ms ago, and every store counts as live for its first 500 ms\)/,
    );
  });

  it('stops waiting for a live store at the deadline', async () => {
    const { registry, clock } = await setup();
    expect(await registry.waitForPlaceableStore(clock.now - 1)).toBe(false);
    await registry.register('s1', '127.0.0.1:1');
    expect(await registry.waitForPlaceableStore(clock.now)).toBe(true);
  });
});
