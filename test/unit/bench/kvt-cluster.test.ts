/** The benchmark's kvt cluster: its `--segment-stores` flag, and a cluster of the size asked for, with its stores' addresses. */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { KvtClusterOptions, parseSegmentStores, startKvtCluster } from '../../../bench/peers/kvt-cluster';
import { fetchMetrics } from '../../../server-kit/metrics/metrics-service';

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

  it("gives each store's gRPC address, where its metrics are asked for (the scale run's chunk-cache lookups)", async () => {
    const cluster = await startKvtCluster({ segmentStores: 2 });
    try {
      expect(cluster.stores).toHaveLength(2);
      for (const store of cluster.stores) {
        expect(store.address).toMatch(/^127\.0\.0\.1:\d+$/);
        const client = new grpc.Client(store.address, grpc.credentials.createInsecure());
        try {
          const { metrics } = await fetchMetrics(client, ['kvt_segmentstore_cache_lookups_total'], Date.now() + 10_000);
          expect(metrics.map((m) => m.name)).toEqual(['kvt_segmentstore_cache_lookups_total']);
          expect(metrics[0].values.find((v) => v.labels.cache === 'chunk' && v.labels.result === 'miss')?.value).toBe(0);
        } finally {
          client.close();
        }
      }
    } finally {
      await cluster.stop();
    }
  }, 60_000);
});
