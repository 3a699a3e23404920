/** What `kvt status` makes of the stores and tables the controller describes. */
import { describe, expect, it } from 'vitest';
import type { KeyValueTableDescription, SegmentStoreDescription } from '../../../client';
import { formatStatus, statusReport } from '../../../bin/cli-status';

const store = (id: string, live: boolean, segmentCount: number): SegmentStoreDescription => ({ id, address: `10.0.0.${id.length}:1`, live, lastHeartbeatAgeMs: 400, segmentCount });

function table(name: string, owners: SegmentStoreDescription[], entries?: number[]): KeyValueTableDescription {
  return {
    scope: 'wiki',
    name,
    state: 'ACTIVE',
    partitionCount: owners.length,
    createdAt: new Date(0),
    partitions: owners.map((s, i) => ({
      partition: i,
      hashLow: i / owners.length,
      hashHigh: (i + 1) / owners.length,
      segment: `${name}-${i}`,
      store: { id: s.id, address: s.address, live: s.live },
      ...(entries === undefined ? {} : { contents: s.live ? { entries: entries[i], bytes: 10 * entries[i] } : { code: 'UNAVAILABLE', error: 'store down' } }),
    })),
  };
}

describe('statusReport', () => {
  it('sums entries per live store (0 for one holding no segment), none for a dead store, and names the tables with partitions on dead stores', () => {
    const a = store('a', true, 2);
    const empty = store('empty', true, 0);
    const down = store('down', false, 2);
    const goneEmpty = store('gone', false, 0);
    const report = statusReport([a, empty, down, goneEmpty], [table('pages', [a, down, a]), table('users', [down])], false);
    expect(report.healthy).toBe(false);
    expect(report.problems).toEqual(['wiki/pages has 1 partition on dead stores (1)', 'wiki/users has 1 partition on dead stores (0)']);
    expect(report.stores.map((s) => [s.id, s.entries])).toEqual([
      ['a', undefined],
      ['empty', 0],
      ['down', undefined],
      ['gone', undefined],
    ]);
    expect(report.stores.map((s) => Object.keys(s).includes('entries'))).toEqual([true, true, false, false]);
    const counted = statusReport([a, empty, down, goneEmpty], [table('pages', [a, down, a], [3, 0, 4]), table('users', [down], [0])], false);
    expect(counted.stores.map((s) => s.entries)).toEqual([7, 0, undefined, undefined]);
    expect(counted.tables[0].partitions.map((p) => p.entries)).toEqual([3, undefined, 4]);
  });

  it('is healthy while every partition is on a live store, and counts nothing with quick', () => {
    const a = store('a', true, 1);
    const report = statusReport([a, store('b', true, 0)], [table('pages', [a])], true);
    expect(report).toMatchObject({ healthy: true, problems: [] });
    expect(report.stores.every((s) => !('entries' in s))).toBe(true);
    expect(formatStatus(report)[0]).toBe('cluster: healthy (2 live and 0 dead segment stores, 1 tables)');
  });
});
