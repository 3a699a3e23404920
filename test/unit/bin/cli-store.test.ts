/** What `kvt store list` and `kvt store remove` print. */
import { describe, expect, it } from 'vitest';
import { formatAge, formatRemoval, formatStoreList } from '../../../bin/cli-store';

describe('formatStoreList', () => {
  it('prints a header and one store a line, columns aligned', () => {
    expect(
      formatStoreList([
        { id: 'a1', address: '127.0.0.1:12345', live: true, lastHeartbeatAgeMs: 412, segmentCount: 8 },
        { id: 'b2-longer', address: '10.0.0.12:1', live: false, lastHeartbeatAgeMs: 3_725_000, segmentCount: 12 },
      ]),
    ).toEqual(['ID         ADDRESS          STATE  LAST HEARTBEAT  SEGMENTS', 'a1         127.0.0.1:12345  live   0.4 s ago       8', 'b2-longer  10.0.0.12:1      dead   1 h 2 min ago   12']);
    expect(formatStoreList([])).toEqual(['ID  ADDRESS  STATE  LAST HEARTBEAT  SEGMENTS']);
  });

  it('writes ages in tenths of seconds below a minute, then minutes, then hours', () => {
    expect([0, 949, 59_949, 59_950, 61_000, 3_599_999, 7_322_000].map(formatAge)).toEqual([
      '0.0 s ago',
      '0.9 s ago',
      '59.9 s ago',
      '0 min 59 s ago',
      '1 min 1 s ago',
      '59 min 59 s ago',
      '2 h 2 min ago',
    ]);
  });
});

describe('formatRemoval', () => {
  it('says what was removed, then what happened to each table, partitions grouped by table', () => {
    const partition = (scope: string, name: string, p: number) => ({ scope, name, partition: p, storeId: 'live-1' });
    expect(
      formatRemoval({
        removed: true,
        id: 'dead-1',
        address: '10.0.0.12:12346',
        lostPartitions: [partition('wiki', 'pages', 1), partition('wiki', 'pages', 3), partition('app', 'one', 0)],
        placedPartitions: [partition('app', 'new', 2)],
        deletingTables: [{ scope: 'app', name: 'old' }],
        unfinishedTables: [{ scope: 'app', name: 'new' }],
      }),
    ).toEqual([
      'removed dead-1 (last at 10.0.0.12:12346)',
      'lost data: wiki/pages partitions 1, 3 (their data stayed on the removed store; they start again empty)',
      'lost data: app/one partition 0 (their data stayed on the removed store; they start again empty)',
      'placed: app/new partition 2 (held no data yet; now on a live store)',
      'deleted: app/old (was being deleted; its segments on the removed store count as deleted)',
      'unfinished: app/new (a store it needs is unreachable; the controller completes it by itself)',
    ]);
  });

  it('marks a store removed before', () => {
    expect(
      formatRemoval({
        removed: false,
        id: 'dead-1',
        address: 'h:1',
        lostPartitions: [],
        placedPartitions: [],
        deletingTables: [],
        unfinishedTables: [],
      }),
    ).toEqual(['removed before: dead-1 (last at h:1)']);
  });
});
