/**
 * The routing cache of a table: fetched once and shared, refreshed when a caller saw a stale route
 * (unless another caller refreshed it meanwhile), asked of the controller again after a failed fetch.
 * The controller is a function that counts its calls and answers a routing of a given generation.
 */
import { describe, expect, it } from 'vitest';
import type { Routing } from '../../../proto/messages';
import { RoutingCache } from '../../../client/internal/routing';

/** A one-partition routing of generation `generation`, its segment named after it. */
function routingOf(generation: number): Routing {
  return {
    scope: 's',
    table: 't',
    partitionCount: 1,
    generation: String(generation),
    partitions: [{ index: 0, hashLow: 0, hashHigh: 1, segmentId: `${generation}0`, storeId: 'a', storeAddress: '127.0.0.1:1', storeLive: true }],
  };
}

/** A controller whose routing moves to a new generation at each call; `fail` makes the next calls fail. */
function controller() {
  const state = { calls: 0, failures: 0 };
  const fetch = async (): Promise<Routing> => {
    state.calls++;
    if (state.failures > 0) {
      state.failures--;
      throw new Error('controller unreachable');
    }
    return routingOf(state.calls);
  };
  return { state, cache: new RoutingCache(fetch) };
}

describe('RoutingCache', () => {
  it('fetches the routing once and serves it from the cache after', async () => {
    const { state, cache } = controller();
    const [a, b] = await Promise.all([cache.get(), cache.get()]);
    expect(a).toBe(b);
    expect(await cache.get()).toBe(a);
    expect(state.calls).toBe(1);
  });

  it('fetches new routing for a caller that saw the cached generation go stale', async () => {
    const { state, cache } = controller();
    const stale = await cache.get();
    const fresh = await cache.refresh(stale.generation);
    expect([fresh.generation, fresh.routeOf(0.5).segmentId, state.calls]).toEqual(['2', '20', 2]);
    expect(await cache.get()).toBe(fresh);
  });

  it('serves a routing already refreshed by another caller to a caller whose stale generation is older', async () => {
    const { state, cache } = controller();
    const stale = await cache.get();
    const refreshed = await cache.refresh(stale.generation);
    expect(await cache.refresh(stale.generation)).toBe(refreshed);
    expect(state.calls).toBe(2);
  });

  it('asks the controller on a refresh without a stale generation, whatever it has cached', async () => {
    const { state, cache } = controller();
    await cache.get();
    expect((await cache.refresh()).generation).toBe('2');
    expect(state.calls).toBe(2);
  });

  it('shares one controller call between concurrent refreshes', async () => {
    const { state, cache } = controller();
    const stale = await cache.get();
    const [a, b] = await Promise.all([cache.refresh(stale.generation), cache.refresh(stale.generation)]);
    expect(a).toBe(b);
    expect(state.calls).toBe(2);
  });

  it('asks the controller again after a failed fetch instead of failing with the old error', async () => {
    const { state, cache } = controller();
    state.failures = 1;
    await expect(cache.get()).rejects.toThrow('controller unreachable');
    expect((await cache.get()).generation).toBe('2');
    state.failures = 1;
    await expect(cache.refresh()).rejects.toThrow('controller unreachable');
    expect((await cache.refresh()).generation).toBe('4');
  });

  it('asks again for a caller whose refresh joined a fetch that started before and answers its stale generation', async () => {
    // The controller answers the generation it holds when asked, but only when the test lets it.
    let generation = 1;
    const answers: (() => void)[] = [];
    let calls = 0;
    const cache = new RoutingCache(() => {
      calls++;
      const routing = routingOf(generation);
      return new Promise<Routing>((resolve) => answers.push(() => resolve(routing)));
    });
    const first = cache.get();
    answers.shift()!();
    const stale = await first;
    // A caller refreshes (the controller still holds generation 1); then the segment moves.
    const early = cache.refresh();
    generation = 2;
    // Another caller saw generation 1 go stale after that: joining the earlier fetch is not enough.
    const late = cache.refresh(stale.generation);
    const lateNoGeneration = cache.refresh();
    answers.shift()!();
    expect((await early).generation).toBe('1');
    await Promise.resolve();
    while (answers.length > 0) answers.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    while (answers.length > 0) answers.shift()!();
    expect((await late).generation).toBe('2');
    expect((await lateNoGeneration).generation).toBe('2');
    expect(calls).toBe(3);
    expect((await cache.get()).generation).toBe('2');
  });
});
