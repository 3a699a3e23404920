import { describe, expect, it } from 'vitest';
import { murmur3, partitionIndex, routingPoint } from '../../../client/internal/hashing';
import { RoutingTable } from '../../../client/internal/routing';
import type { Routing } from '../../../proto/messages';

// Golden vectors: the routing of every stored key depends on them. Never change these values.
const GOLDEN: [string, number, number, number][] = [
  // input, MurmurHash3 x86_32 (seed 0), partition of 4, partition of 1024
  ['', 0, 0, 0],
  ['a', 1009084850, 0, 240],
  ['hello', 613153351, 0, 146],
  ['The quick brown fox jumps over the lazy dog', 776992547, 0, 185],
  ['Main_Page', 3417568488, 3, 814],
  ['wiki/Main_Page', 2149701643, 2, 512],
  ['family-0', 2140360258, 1, 510],
  ['ключ', 2589532226, 2, 617],
];

describe('routing hash', () => {
  it.each(GOLDEN)('hashes %j to its golden value and partitions', (input, hash, of4, of1024) => {
    expect(murmur3(Buffer.from(input, 'utf8'))).toBe(hash);
    const x = hash / 2 ** 32;
    expect(partitionIndex(x, 4)).toBe(of4);
    expect(partitionIndex(x, 1024)).toBe(of1024);
  });

  it('hashes the family when there is one, else the key', () => {
    expect(routingPoint('Main_Page', Buffer.from('anything'))).toBe(3417568488 / 2 ** 32);
    expect(routingPoint(null, Buffer.from('Main_Page'))).toBe(3417568488 / 2 ** 32);
  });

  it('maps [0, 1) onto partitions without gaps', () => {
    expect(partitionIndex(0, 3)).toBe(0);
    expect(partitionIndex(1 / 3 - 1e-12, 3)).toBe(0);
    expect(partitionIndex(1 / 3, 3)).toBe(1);
    expect(partitionIndex(0.999999999, 3)).toBe(2);
    expect(partitionIndex((2 ** 32 - 1) / 2 ** 32, 1024)).toBe(1023);
    expect(partitionIndex(1, 7)).toBe(6);
  });
});

function routingOf(n: number): Routing {
  const partitions = Array.from({ length: n }, (_, i) => ({
    index: i,
    hashLow: i / n,
    hashHigh: (i + 1) / n,
    segmentId: String(100 + i),
    storeId: `s${i % 2}`,
    storeAddress: `127.0.0.1:${7000 + (i % 2)}`,
    storeLive: true,
  }));
  return { scope: 's', table: 't', partitionCount: n, generation: '1', partitions: partitions.reverse() };
}

describe('RoutingTable', () => {
  it('routes a point to the partition whose range contains it', () => {
    const table = new RoutingTable(routingOf(5));
    expect(table.routeOf(0).segmentId).toBe('100');
    expect(table.routeOf(0.2).segmentId).toBe('101');
    expect(table.routeOf(0.5).segmentId).toBe('102');
    expect(table.routeOf(0.9999).segmentId).toBe('104');
    expect(table.routeOf(0.5).address).toBe('127.0.0.1:7000');
    expect(table.allRoutes().map((r) => r.partition)).toEqual([0, 1, 2, 3, 4]);
  });

  it('agrees with partitionIndex for every golden vector', () => {
    const table = new RoutingTable(routingOf(1024));
    for (const [, hash, , of1024] of GOLDEN) expect(table.routeOf(hash / 2 ** 32).partition).toBe(of1024);
  });
});
