/**
 * What the linearizability tests (test/integration/linearizability*.test.ts) share about their
 * cluster: tables in scope `lin`, key families picked by the store that owns them, stores SIGKILLed
 * on a seeded schedule, a violating history kept in a file, and the verdict as a list of violations.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'vitest';
import { KeyValueTableManager } from '../../client';
import type { Routing } from '../../proto/messages';
import { KvCheck, KvOp, shortName } from './kv-model';
import { fetchRouting, mulberry32, ownerOf } from './oracle';
import type { TestCluster } from './process';

/** Creates table `name` (`partitionCount` partitions) in scope `lin`; its routing. */
export async function createTable(cluster: TestCluster, name: string, partitionCount = 4): Promise<Routing> {
  await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
  await manager.createScope('lin');
  await manager.createKeyValueTable('lin', name, { partitionCount });
  return fetchRouting(cluster.controllerAddress, 'lin', name);
}

/**
 * `perStore` of the names `name(0)`, `name(1)`, … on each store (a family-less key routes as a family
 * of its name does), the first store's first.
 */
export function spread(routing: Routing, table: string, name: (i: number) => string, perStore: number): string[] {
  return onStores(routing, table, name, [perStore, perStore]).flat();
}

/**
 * `counts[s]` of the names `name(0)`, `name(1)`, … on store `s`, the stores numbered in the order the
 * names first reach them.
 */
export function onStores(routing: Routing, table: string, name: (i: number) => string, counts: number[]): string[][] {
  const byStore = new Map<string, string[]>();
  const wanted = counts.reduce((a, b) => a + b, 0);
  for (let i = 0, found = 0; i < 200 * wanted && found < wanted; i++) {
    const store = ownerOf(routing, name(i));
    if (!byStore.has(store)) byStore.set(store, []);
    const list = byStore.get(store)!;
    if (list.length < (counts[[...byStore.keys()].indexOf(store)] ?? 0)) {
      list.push(name(i));
      found++;
    }
  }
  expect(byStore.size, `table ${table} must have partitions on both stores`).toBe(counts.length);
  return [...byStore.values()];
}

/**
 * SIGKILLs each store now and then until `end` (at least one second apart, the first after a second
 * or more) and restarts it on its port with `storeArgs`: what its log held unapplied is replayed.
 */
export async function killStores(cluster: TestCluster, seed: number, end: number, kills: { count: number }, storeArgs: string[] = []): Promise<void> {
  await Promise.all(
    cluster.stores.map(async (_, store) => {
      const rand = mulberry32(seed * 10 + store);
      const pause = () => new Promise((r) => setTimeout(r, 1_000 + Math.floor(rand() * 3_000)));
      for (await pause(); Date.now() + 1_500 < end; await pause()) {
        await cluster.stores[store].kill('SIGKILL');
        await cluster.restartStore(store, cluster.stores[store].port, storeArgs);
        kills.count++;
      }
    }),
  );
}

/** Writes a history (its operations, as JSON) to a file that outlives the test; returns its path. */
export function keepHistory(ops: readonly KvOp[], seed: number): string {
  const file = path.join(os.tmpdir(), `kvt-linearizability-${seed}-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify(ops));
  return file;
}

/** The violations of a check: contradicting versions, and each group without a linearization. */
export function violationsOf(check: KvCheck): string[] {
  return [...check.conflicts, ...check.groups.filter((g) => g.verdict !== 'linearizable').map((g) => g.report ?? `${shortName(g.group)}: the search gave up after ${g.states} states`)];
}
