import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../../controller/metadata/keyed-mutex';

/** A promise with its resolve handle, for work the test finishes by hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Lets every pending microtask and timer callback run. */
const settle = () => new Promise((r) => setTimeout(r, 10));

describe('KeyedMutex', () => {
  it('runs the work of one key one at a time, in arrival order, and of other keys at once', async () => {
    const mutex = new KeyedMutex();
    const events: string[] = [];
    const gates = [gate(), gate(), gate()];
    const job = (name: string, g: { promise: Promise<void> }) => async () => {
      events.push(`${name} starts`);
      await g.promise;
      events.push(`${name} ends`);
      return name;
    };
    const a1 = mutex.run('a', job('a1', gates[0]));
    const a2 = mutex.run('a', job('a2', gates[1]));
    const b1 = mutex.run('b', job('b1', gates[2]));
    await settle();
    expect(events).toEqual(['a1 starts', 'b1 starts']);
    expect(mutex.isHeld('a')).toBe(true);
    gates[1].open(); // a2 may end, but has not started
    await settle();
    expect(events).toEqual(['a1 starts', 'b1 starts']);
    gates[0].open();
    expect(await Promise.all([a1, a2])).toEqual(['a1', 'a2']);
    expect(events).toEqual(['a1 starts', 'b1 starts', 'a1 ends', 'a2 starts', 'a2 ends']);
    gates[2].open();
    expect(await b1).toBe('b1');
    await settle();
    expect(mutex.isHeld('a')).toBe(false);
  });

  it('keeps work queued behind a settled work waiting for the work before it', async () => {
    const mutex = new KeyedMutex();
    const events: string[] = [];
    const first = gate();
    const second = gate();
    const one = mutex.run('k', async () => {
      await first.promise;
      events.push('one ends');
    });
    const two = mutex.run('k', async () => {
      events.push('two starts');
      await second.promise;
      events.push('two ends');
    });
    first.open();
    await one;
    await settle();
    // `one` has settled while `two` runs: work arriving now still waits for `two`.
    expect(mutex.isHeld('k')).toBe(true);
    const three = mutex.run('k', async () => {
      events.push('three starts');
    });
    await settle();
    expect(events).toEqual(['one ends', 'two starts']);
    second.open();
    await Promise.all([two, three]);
    expect(events).toEqual(['one ends', 'two starts', 'two ends', 'three starts']);
  });

  it('rejects as the work does, and runs the next work of the key regardless', async () => {
    const mutex = new KeyedMutex();
    const failed = mutex.run('k', () => Promise.reject(new Error('first failed')));
    const next = mutex.run('k', () => Promise.resolve('next ran'));
    await expect(failed).rejects.toThrow('first failed');
    expect(await next).toBe('next ran');
  });

  it('drains work queued for any key, including work queued while draining', async () => {
    const mutex = new KeyedMutex();
    const events: string[] = [];
    void mutex.run('a', async () => {
      await settle();
      void mutex.run('b', async () => {
        await settle();
        events.push('b ends');
      });
      events.push('a ends');
    });
    await mutex.drain();
    expect(events).toEqual(['a ends', 'b ends']);
    expect(mutex.isHeld('a') || mutex.isHeld('b')).toBe(false);
  });
});
