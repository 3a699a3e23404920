/**
 * ByteLru, the bounded map behind the family directory and chunk caches: recency order, pinned entries
 * (moved out of the way, never evicted), and the bookkeeping of bytes through every change.
 */
import { describe, expect, it } from 'vitest';
import { ByteLru } from '../../../segmentstore/storage/byte-lru';

describe('ByteLru', () => {
  it('evicts the least recently used first, a get or a set making an entry the most recent', () => {
    const lru = new ByteLru<string>(3);
    for (const k of ['a', 'b', 'c']) lru.set(k, k, 1);
    expect(lru.get('a')).toBe('a');
    lru.set('b', 'B', 1);
    lru.set('d', 'd', 1);
    expect([...lru.values()]).toEqual(['a', 'B', 'd']);
    expect(lru.peek('c')).toBeUndefined();
    lru.peek('a'); // a peek does not count as a use
    lru.set('e', 'e', 1);
    expect([...lru.values()]).toEqual(['B', 'd', 'e']);
    expect(lru.bytes).toBe(3);
    expect(lru.size).toBe(3);
  });

  it('skips pinned entries, moving them to the most recent end, and evicts the next ones', () => {
    const pins = new Set(['a', 'b']);
    const lru = new ByteLru<string>(3, (v) => pins.has(v));
    for (const k of ['a', 'b', 'c']) lru.set(k, k, 1);
    lru.set('d', 'd', 1);
    expect([...lru.values()]).toEqual(['d', 'a', 'b']);
    expect(lru.peek('c')).toBeUndefined();
    pins.clear();
    lru.set('e', 'e', 1);
    expect(lru.peek('d')).toBeUndefined();
    expect([...lru.values()]).toEqual(['a', 'b', 'e']);
  });

  it('stays over its budget rather than evict pinned entries or the one being set', () => {
    const lru = new ByteLru<string>(2, (v) => v === 'pinned');
    lru.set('p', 'pinned', 2);
    lru.set('x', 'x', 5);
    expect([...lru.values()]).toEqual(['x', 'pinned']); // the pinned one was walked past, so it moved
    expect(lru.bytes).toBe(7);
    lru.resize('x', 1);
    expect(lru.bytes).toBe(3);
    lru.set('y', 'y', 1);
    expect(lru.peek('x')).toBeUndefined();
    expect(lru.bytes).toBe(3);
  });

  it('evicts as many unpinned entries as a large one needs, and walks past a bounded number of pinned ones', () => {
    const lru = new ByteLru<number>(1_000, (v) => v < 0);
    for (let i = 0; i < 1_000; i++) lru.set(`small${i}`, i, 1);
    lru.set('large', 1_000, 900);
    expect(lru.size).toBe(101);
    expect(lru.bytes).toBe(1_000);
    // 200 pinned entries at the head: one set walks past at most 64 of them, then the next ones.
    const pinned = new ByteLru<number>(300, (v) => v < 0);
    for (let i = 0; i < 200; i++) pinned.set(`p${i}`, -1, 1);
    for (let i = 0; i < 100; i++) pinned.set(`u${i}`, i, 1);
    pinned.set('x', 1, 50);
    expect(pinned.bytes).toBe(350); // over: only pinned ones were within reach
    for (let i = 0; i < 4; i++) pinned.set(`y${i}`, 1, 1);
    expect(pinned.bytes).toBeLessThanOrEqual(300);
    expect([...pinned.values()].filter((v) => v < 0)).toHaveLength(200);
  });

  it('never evicts a held entry, nor walks past it, until it is released as the most recent', () => {
    const lru = new ByteLru<string>(3);
    for (const k of ['a', 'b', 'c']) lru.set(k, k, 1);
    lru.hold('a');
    lru.hold('b');
    lru.set('d', 'd', 1);
    expect(lru.peek('c')).toBeUndefined();
    lru.set('e', 'e', 1);
    expect(lru.peek('d')).toBeUndefined();
    expect([...lru.values()].sort()).toEqual(['a', 'b', 'e']);
    lru.release('a');
    lru.set('f', 'f', 1); // 'e' is now older than the released 'a'
    expect([...lru.values()].sort()).toEqual(['a', 'b', 'f']);
    // More held than the budget: the map stays over it, and a set costs no walk.
    const many = new ByteLru<number>(10);
    for (let i = 0; i < 1_000; i++) {
      many.set(`h${i}`, i, 1);
      many.hold(`h${i}`);
    }
    many.set('x', -1, 1);
    expect(many.size).toBe(1_001);
    expect(many.bytes).toBe(1_001);
    // A new value under a held key is not held; releasing it again changes nothing.
    many.set('h0', -2, 1);
    many.release('h0');
    many.set('y', -3, 1);
    expect(many.peek('h0')).toBeUndefined();
    many.delete('h1');
    many.deletePrefix('h2');
    expect(many.peek('h1')).toBeUndefined();
    expect(many.peek('h20')).toBeUndefined();
    expect(many.bytes).toBe(many.size);
  });

  it('deletes by key and by prefix, and clears', () => {
    const lru = new ByteLru<number>(100);
    ['s1/a', 's1/b', 's2/a', 's10/a'].forEach((k, i) => lru.set(k, i, 10));
    lru.delete('s2/a');
    lru.delete('missing');
    lru.deletePrefix('s1/');
    expect([...lru.values()]).toEqual([3]);
    expect(lru.bytes).toBe(10);
    lru.clear();
    expect([...lru.values()]).toEqual([]);
    expect(lru.bytes).toBe(0);
    lru.set('again', 1, 5);
    expect([...lru.values()]).toEqual([1]);
  });

  it('keeps its byte count exact through random sets, resizes, gets and deletes', () => {
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const lru = new ByteLru<number>(500, (v) => v % 17 === 0);
    const sizes = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const k = `k${Math.floor(rand() * 300)}`;
      const r = rand();
      const bytes = 1 + Math.floor(rand() * 20);
      if (r < 0.5) {
        lru.set(k, i, bytes);
        sizes.set(k, bytes);
      } else if (r < 0.7) {
        if (lru.peek(k) !== undefined) sizes.set(k, bytes);
        lru.resize(k, bytes);
      } else if (r < 0.9) lru.get(k);
      else lru.delete(k);
      for (const key of [...sizes.keys()]) if (lru.peek(key) === undefined) sizes.delete(key);
      expect(lru.size).toBe(sizes.size);
    }
    expect(lru.bytes).toBe([...sizes.values()].reduce((a, b) => a + b, 0));
    expect([...lru.values()]).toHaveLength(lru.size);
  });
});
