/**
 * The status page's HTTP server (controller/ops/status-server.ts) on 127.0.0.1: what it answers for
 * the page, its data, a method it does not take and a path it does not know, with which headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterStatus } from '../../../controller/ops/cluster-status';
import { startStatusServer } from '../../../controller/ops/status-server';
import type { HttpEndpoint } from '../../../server-kit/http-server';

const STATUS: ClusterStatus = {
  generatedAtMs: 1_700_000_000_000,
  storeTimeoutMs: 10_000,
  refreshMs: 1_000,
  summary: { liveStores: 1, deadStores: 0, scopes: 1, tables: 1, partitionsOnDeadStores: 0 },
  stores: [{ id: 'a', address: '127.0.0.1:12345', live: true, lastHeartbeatAgeMs: 12, segments: 1, entries: 3, bytes: 30 }],
  scopes: [
    {
      name: 's',
      tables: [
        {
          name: 't',
          state: 'ACTIVE',
          partitionCount: 1,
          createdAtMs: 1_700_000_000_000,
          partitions: [{ index: 0, hashLow: 0, hashHigh: 1, segment: '1', storeId: 'a', storeAddress: '127.0.0.1:12345', storeLive: true }],
        },
      ],
    },
  ],
};

describe('startStatusServer', () => {
  let endpoint: HttpEndpoint;
  let base: string;
  let asked = 0;
  beforeAll(async () => {
    endpoint = await startStatusServer('127.0.0.1', 0, async () => {
      asked++;
      return STATUS;
    });
    base = `http://127.0.0.1:${endpoint.port}`;
  });
  afterAll(async () => {
    await endpoint?.close();
  });

  it('serves the page and its data, uncached, with a policy that lets the page load nothing from elsewhere', async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<title>kvt cluster status</title>');
    const data = await fetch(`${base}/api/status`);
    expect(data.status).toBe(200);
    expect(data.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await data.json()).toEqual(STATUS);
    for (const res of [page, data]) {
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('answers 405 to any method but GET and HEAD, without computing the status', async () => {
    const before = asked;
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await fetch(`${base}/api/status`, { method, body: method === 'DELETE' ? undefined : '{}' });
      expect([method, res.status, res.headers.get('allow'), await res.text()]).toEqual([method, 405, 'GET, HEAD', '']);
    }
    expect(asked).toBe(before);
    const head = await fetch(`${base}/api/status`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('answers 404 naming where the page is for any other path', async () => {
    const res = await fetch(`${base}/api/other`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('not found: the status page is at /, its data at /api/status\n');
  });
});
