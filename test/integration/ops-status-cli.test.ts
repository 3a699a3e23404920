/**
 * `kvt status [--json]` against a real cluster: every store with its segments and entries, every
 * table's partitions with their stores; exit 0 while every partition's store is live, exit 1 once a
 * table has a partition on a dead store (named on stderr).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers } from '../../client';
import type { ClusterStatusReport } from '../../bin/cli-status';
import { freePort, KVT_BIN, REPO_ROOT, TestCluster } from '../harness/process';

function kvt(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [KVT_BIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('kvt status', () => {
  let cluster: TestCluster;
  const ENTRIES = { pages: 40, users: 7 };
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2, controllerArgs: ['--heartbeat-interval-ms', '200', '--store-timeout-ms', '1500'] });
    env = { KVT_CONTROLLER: cluster.controllerAddress };
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    const factory = KeyValueTableFactory.withScope('wiki', { controller: cluster.controllerAddress });
    try {
      await manager.createScope('wiki');
      await manager.createKeyValueTable('wiki', 'pages', { partitionCount: 4 });
      await manager.createKeyValueTable('wiki', 'users', { partitionCount: 1 });
      for (const [name, n] of Object.entries(ENTRIES)) {
        const table = factory.forKeyValueTable(name, { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
        await Promise.all(Array.from({ length: n }, (_, i) => table.put(null, `k${i}`, 'v')));
      }
    } finally {
      await factory.close();
      await manager.close();
    }
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('prints every store and every table with its partitions, with entries, and exits 0 while all is live', async () => {
    const r = await kvt(['status'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('cluster: healthy (2 live and 0 dead segment stores, 2 tables)');
    expect(lines[2]).toMatch(/^STORE\s+ADDRESS\s+STATE\s+LAST HEARTBEAT\s+SEGMENTS\s+ENTRIES$/);
    expect(lines.filter((l) => / live /.test(l) && /s ago/.test(l))).toHaveLength(2);
    expect(lines).toContain('wiki/pages: ACTIVE, 4 partitions');
    expect(lines).toContain('wiki/users: ACTIVE, 1 partition');
    expect(lines.filter((l) => /^ {2}\d+ /.test(l))).toHaveLength(5);
  });

  it('--json: one object whose entries add up to what was written, per store and per partition', async () => {
    const r = await kvt(['status', '--json'], env);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as ClusterStatusReport;
    expect(report.healthy).toBe(true);
    expect(report.problems).toEqual([]);
    expect(report.stores).toHaveLength(2);
    expect(report.stores.reduce((n, s) => n + s.segments, 0)).toBe(5);
    expect(report.stores.reduce((n, s) => n + (s.entries ?? NaN), 0)).toBe(ENTRIES.pages + ENTRIES.users);
    const pages = report.tables.find((t) => t.name === 'pages')!;
    expect(pages).toMatchObject({ scope: 'wiki', state: 'ACTIVE', partitionCount: 4 });
    expect(pages.partitions.reduce((n, p) => n + (p.entries ?? NaN), 0)).toBe(ENTRIES.pages);
    const ids = new Set(report.stores.map((s) => s.id));
    for (const p of pages.partitions) expect(ids.has(p.store.id) && p.store.live).toBe(true);
    // --quick leaves the counting out.
    const quick = JSON.parse((await kvt(['status', '--json', '--quick'], env)).stdout) as ClusterStatusReport;
    expect(quick.stores.every((s) => s.entries === undefined)).toBe(true);
  });

  it('exits 1, naming the table and its partitions, once a table has a partition on a dead store', async () => {
    const victim = cluster.stores[0];
    const id = String(victim.logs.find((r) => r.msg === 'registered with controller')!.storeId);
    const before = JSON.parse((await kvt(['status', '--json', '--quick'], env)).stdout) as ClusterStatusReport;
    const onVictim = before.tables
      .map((t) => ({ table: `${t.scope}/${t.name}`, partitions: t.partitions.filter((p) => p.store.id === id).map((p) => p.partition) }))
      .filter((t) => t.partitions.length > 0);
    expect(onVictim.length).toBeGreaterThan(0);
    await victim.kill('SIGKILL');
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    try {
      await expect.poll(async () => (await manager.listSegmentStores()).find((s) => s.id === id)?.live, { timeout: 20_000, interval: 200 }).toBe(false);
    } finally {
      await manager.close();
    }
    const r = await kvt(['status'], env);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe('cluster: degraded (1 live and 1 dead segment stores, 2 tables)');
    expect(r.stdout).toMatch(new RegExp(`^${id} .* dead `, 'm'));
    const expected = onVictim.map((t) => `kvt status: ${t.table} has ${t.partitions.length} partition${t.partitions.length === 1 ? '' : 's'} on dead stores (${t.partitions.join(', ')})`);
    expect(r.stderr.trimEnd().split('\n')).toEqual(expected);
    const json = await kvt(['status', '--json'], env);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as ClusterStatusReport;
    expect(report.healthy).toBe(false);
    expect(report.problems).toEqual(expected.map((l) => l.slice('kvt status: '.length)));
    // The live store still counts its entries; the dead one cannot.
    expect(report.stores.find((s) => s.id === id)!.entries).toBeUndefined();
    expect(report.stores.find((s) => s.id !== id)!.entries).toEqual(expect.any(Number));
  });

  it('is bad usage (exit 2) with an argument, and a failure (exit 1, one line) without a controller', async () => {
    const usage = await kvt(['status', 'extra'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('kvt status: expected 0 argument(s), got 1; usage: kvt status [--json] [--quick]\n');
    const help = await kvt(['status', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--json');
    const nobody = `127.0.0.1:${await freePort()}`;
    const down = await kvt(['status', '--controller', nobody]);
    expect(down.code).toBe(1);
    expect(down.stdout).toBe('');
    expect(down.stderr).toMatch(/^kvt status: .+ \[UNAVAILABLE\]\n$/);
  });
});
