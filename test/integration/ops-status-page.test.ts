/**
 * The controller's status page (`--http-port`) in a real browser: Debian's Chromium, headless, driven
 * by playwright-core (installed by scripts/install-chromium.sh, which .ci/run calls). The page lists a
 * table the test creates with each partition's store, shows per-store operation rates while a
 * workload runs, and shows a store going dead after a SIGKILL once the heartbeat timeout has passed.
 * Nothing is loaded from anywhere but the controller. A screenshot goes to test-output/.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers } from '../../client';
import type { ClusterStatus } from '../../controller/ops/cluster-status';
import { REPO_ROOT, TestCluster } from '../harness/process';
import { controllerClient } from './controller-helpers';

/** The little of the DOM the functions run in the page use (the tests compile without the DOM's types). */
interface PageElement {
  textContent: string | null;
  children: ArrayLike<PageElement>;
}
declare const document: { querySelectorAll(selector: string): Iterable<PageElement>; querySelector(selector: string): PageElement | null };

const CHROMIUM = process.env.KVT_CHROMIUM ?? '/usr/bin/chromium';
const OUTPUT_DIR = path.join(REPO_ROOT, 'test-output', 'ops-status-page');
const STORE_TIMEOUT_MS = 2_000;
/** Bound on waiting for the page to change: the store timeout, the page's refresh, and room for a slow machine. */
const PAGE_WAIT_MS = STORE_TIMEOUT_MS + 20_000;

/** Chromium as the machine's probe runs it: no sandbox (root), no GPU, and no calls home (the network is closed). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('the status page in headless Chromium', () => {
  let cluster: TestCluster;
  let browser: Browser;
  let page: Page;
  let base: string;
  const requested: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install-chromium.sh (or set KVT_CHROMIUM)`);
    cluster = await TestCluster.start({
      stores: 2,
      controllerArgs: ['--http-port', '0', '--heartbeat-interval-ms', '200', '--store-timeout-ms', String(STORE_TIMEOUT_MS)],
      storeArgs: ['--register-retry-max-ms', '500'],
    });
    base = `http://127.0.0.1:${cluster.controller.logs.find((r) => r.msg === 'controller started')!.httpPort}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });
  afterAll(async () => {
    await browser?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  async function status(): Promise<ClusterStatus> {
    return (await (await fetch(`${base}/api/status`)).json()) as ClusterStatus;
  }

  it('lists a table created by the test, each partition with its segment and its live store', async () => {
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    try {
      await manager.createScope('wiki');
      await manager.createKeyValueTable('wiki', 'pages', { partitionCount: 6 });
    } finally {
      await manager.close();
    }
    await page.goto(`${base}/`);
    const table = page.locator('[data-table="wiki/pages"]');
    await table.waitFor({ timeout: PAGE_WAIT_MS });
    expect(await table.locator('h3').innerText()).toMatch(/^wiki\/pages ACTIVE 6 partitions, created /);
    const rows = table.locator('tbody tr');
    expect(await rows.count()).toBe(6);
    const described = (await status()).scopes[0].tables[0];
    for (const p of described.partitions) {
      const cells = await rows.nth(p.index).locator('td').allInnerTexts();
      expect(cells).toEqual([String(p.index), expect.stringMatching(/^\[/), p.segment, p.storeId, p.storeAddress, 'live']);
    }
    for (const store of cluster.stores) {
      const id = String(store.logs.find((r) => r.msg === 'registered with controller')!.storeId);
      expect(await page.locator(`[data-store="${id}"] [data-state]`).innerText()).toBe('live');
    }
    expect(await page.locator('#health').innerText()).toBe('healthy');
  });

  it("shows each store's operation rates from its metrics while a workload runs", async () => {
    const factory = KeyValueTableFactory.withScope('wiki', { controller: cluster.controllerAddress });
    const table = factory.forKeyValueTable('pages', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    let writing = true;
    // Bounded in count and time; it stops as soon as the page shows a rate.
    const workload = (async () => {
      const until = Date.now() + PAGE_WAIT_MS;
      for (let round = 0; writing && round < 2_000 && Date.now() < until; round++) {
        await Promise.all(Array.from({ length: 20 }, (_, i) => table.put(`page-${i}`, `rev-${round}`, 'text')));
      }
    })();
    try {
      // Column 8 of a store's row is its updates per second.
      await page.waitForFunction(() => [...document.querySelectorAll('#stores tbody tr')].some((tr) => Number((tr.children[7]?.textContent ?? '').replace(/,/g, '')) > 0), undefined, {
        timeout: PAGE_WAIT_MS,
      });
    } finally {
      writing = false;
      await workload;
      await factory.close();
    }
    const shown = await page.locator('#stores tbody tr').evaluateAll((trs) => trs.map((tr) => Number((tr.children[7]?.textContent ?? '').replace(/,/g, ''))));
    expect(Math.max(...shown)).toBeGreaterThan(0);
    // The rates come from the stores' own operation counters, which the page's data carries too.
    expect((await status()).stores.reduce((n, s) => n + (s.operations?.update ?? 0), 0)).toBeGreaterThan(0);
  });

  it('shows a store going dead once the heartbeat timeout has passed after a SIGKILL, with its partitions', async () => {
    const victim = cluster.stores[1];
    const id = String(victim.logs.find((r) => r.msg === 'registered with controller')!.storeId);
    const owned = (await status()).scopes[0].tables[0].partitions.filter((p) => p.storeId === id).map((p) => p.index);
    expect(owned.length).toBeGreaterThan(0);
    await victim.kill('SIGKILL');
    await page.locator(`[data-store="${id}"] [data-state="dead"]`).waitFor({ timeout: PAGE_WAIT_MS });
    // Dead once it had been silent for the timeout (by the controller's clock), not before.
    const now = await status();
    expect(now.stores.find((s) => s.id === id)).toMatchObject({ live: false, lastHeartbeatAgeMs: expect.any(Number) });
    expect(now.stores.find((s) => s.id === id)!.lastHeartbeatAgeMs).toBeGreaterThan(STORE_TIMEOUT_MS);
    const rows = page.locator('[data-table="wiki/pages"] tbody tr');
    await page.waitForFunction((dead) => dead.every((i) => document.querySelector(`[data-table="wiki/pages"] tr[data-partition="${i}"] [data-state]`)?.textContent === 'dead'), owned, {
      timeout: PAGE_WAIT_MS,
    });
    for (const i of owned) expect(await rows.nth(i).locator('[data-state]').innerText()).toBe('dead');
    expect(await page.locator('#health').innerText()).toBe('degraded');

    fs.mkdirSync(OUTPUT_DIR, { recursive: true });
    const shot = path.join(OUTPUT_DIR, 'status-page-store-dead.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(fs.statSync(shot).size).toBeGreaterThan(10_000);
  });

  it('shows a store id that looks like markup as text, never as markup', async () => {
    // The controller takes any store id of 1 to 250 characters; the page must not run what one carries.
    const id = '<img src=x id=injected-by-store-id>';
    const controller = controllerClient(cluster.controllerAddress);
    try {
      await controller.call('RegisterSegmentStore', { storeId: id, address: '127.0.0.1:1' });
    } finally {
      controller.close();
    }
    const row = page.locator(`[data-store="${id}"]`);
    await row.waitFor({ timeout: PAGE_WAIT_MS });
    expect(await row.locator('td').first().innerText()).toBe(id);
    expect(await page.locator('#injected-by-store-id').count()).toBe(0);
  });

  it('loaded nothing but the page and its data from the controller, without a script error', () => {
    expect(requested.length).toBeGreaterThan(2);
    for (const url of requested) expect(url.startsWith(`${base}/`), url).toBe(true);
    const paths = new Set(requested.map((u) => new URL(u).pathname));
    expect(paths.has('/') && paths.has('/api/status')).toBe(true);
    // (Chromium may ask for /favicon.ico by itself; the page links nothing else.)
    for (const p of paths) expect(['/', '/api/status', '/favicon.ico']).toContain(p);
    expect(pageErrors).toEqual([]);
  });
});
