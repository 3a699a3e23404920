/** The benchmark's kvt cluster: its `--segment-stores` flag, and a cluster of the size asked for. */
import { describe, expect, it } from 'vitest';
import { KvtClusterOptions, parseSegmentStores, startKvtCluster } from '../../../bench/peers/kvt-cluster';

describe('bench kvt cluster', () => {
  it('takes --segment-stores from 1 to 8 and names the flag and the limit otherwise', () => {
    expect(parseSegmentStores('1')).toBe(1);
    expect(parseSegmentStores('8')).toBe(8);
    for (const bad of ['0', '9', '1.5', 'two', '', undefined]) {
      expect(() => parseSegmentStores(bad)).toThrow(/--segment-stores must be an integer from 1 to 8, got/);
    }
  });

  it('starts a controller and as many segment stores as asked, all registered', async () => {
    const options: KvtClusterOptions = { segmentStores: 1 };
    const cluster = await startKvtCluster(options);
    try {
      expect([...cluster.roles.values()]).toEqual(['controller', 'segmentstore-0']);
      expect(cluster.controller).toMatch(/^127\.0\.0\.1:\d+$/);
    } finally {
      await cluster.stop();
    }
  }, 60_000);
});
