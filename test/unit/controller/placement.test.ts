import { describe, expect, it } from 'vitest';
import { placePartitions } from '../../../controller/placement/placement';

function countBy(owners: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of owners) counts[o] = (counts[o] ?? 0) + 1;
  return counts;
}

describe('placePartitions', () => {
  it('spreads partitions evenly over idle stores, alternating in id order', () => {
    expect(placePartitions(4, ['b', 'a'])).toEqual(['a', 'b', 'a', 'b']);
    expect(countBy(placePartitions(1024, ['s1', 's2', 's3']))).toEqual({ s1: 342, s2: 341, s3: 341 });
  });

  it('fills the least loaded store first', () => {
    const owners = placePartitions(
      4,
      ['a', 'b', 'c'],
      new Map([
        ['a', 3],
        ['b', 1],
      ]),
    );
    expect(owners).toEqual(['c', 'b', 'c', 'b']);
  });

  it('evens out the total load across several tables', () => {
    const load = new Map<string, number>();
    for (const n of [3, 5, 1, 7]) {
      for (const id of placePartitions(n, ['x', 'y'], load)) load.set(id, (load.get(id) ?? 0) + 1);
    }
    expect(Object.fromEntries(load)).toEqual({ x: 8, y: 8 });
  });

  it('is deterministic for the same inputs whatever the order of the store list', () => {
    const load = new Map([
      ['a', 2],
      ['b', 2],
      ['c', 5],
    ]);
    expect(placePartitions(7, ['c', 'b', 'a'], load)).toEqual(placePartitions(7, ['a', 'b', 'c'], load));
  });

  it('ignores the load of stores that are not live', () => {
    expect(
      placePartitions(
        2,
        ['a'],
        new Map([
          ['dead', 0],
          ['a', 9],
        ]),
      ),
    ).toEqual(['a', 'a']);
  });

  it('refuses to place without a live store', () => {
    expect(() => placePartitions(1, [])).toThrow('cannot place partitions: no live segment store');
  });
});
