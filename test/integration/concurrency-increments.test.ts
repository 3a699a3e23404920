/**
 * Optimistic concurrency through real processes: 16 clients (each with its own factory, so its own
 * connections and coalescer) increment 10 hot counters with read → replace(version) loops. No update
 * may be lost: each counter ends equal to the number of successful increments, and the history of
 * successful replaces forms one unbroken chain per key (each expected version is the version the
 * previous successful replace of that key produced).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadKeyVersionError, KeyValueTableFactory, KeyValueTableManager, Serializers, Version } from '../../client';
import { TestCluster } from '../harness/process';
import { mulberry32 } from '../harness/oracle';

const CLIENTS = 16;
const INCREMENTS_PER_CLIENT = 200;
const KEYS = Array.from({ length: 10 }, (_, i) => `hot-${i}`);
/** Bounds the whole run even on a starved machine (attempts, not time, decide the result). */
const MAX_ATTEMPTS_PER_CLIENT = 20_000;
const TIME_BUDGET_MS = 45_000;

/** One successful increment: the key, the version it expected, the version it produced, the value written. */
interface Success {
  key: string;
  expected: string;
  produced: Version;
  value: number;
}

describe('conditional increments under contention', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('conc');
    await manager.createKeyValueTable('conc', 'counters', { partitionCount: 4 });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  // Family-less keys are one LevelDB record each; keys of one family share chunks (one segment).
  it.each([
    { family: null, label: 'family-less keys' },
    { family: 'counters', label: 'keys of one family (chunked)' },
  ])(
    'loses no update on $label: every counter equals its successful increments and each key has one version chain',
    async ({ family, label }) => {
      const factories = Array.from({ length: CLIENTS }, () => KeyValueTableFactory.withScope('conc', { controller: cluster.controllerAddress }));
      const tables = factories.map((f) => f.forKeyValueTable('counters', { keySerializer: Serializers.utf8, valueSerializer: Serializers.json }));
      try {
        // Seed the counters with 0 through one client; the seed versions start the chains.
        const initial = new Map<string, Version>();
        for (const key of KEYS) initial.set(key, await tables[0].put(family, key, 0));

        const deadline = Date.now() + TIME_BUDGET_MS;
        const results = await Promise.all(tables.map((table, c) => runClient(table, family, c, deadline)));
        const successes = results.flatMap((r) => r.successes);
        const conflicts = results.reduce((n, r) => n + r.conflicts, 0);

        // Every client finished its quota (the budget is generous; a shortfall is reported, not hidden).
        expect(results.map((r) => r.successes.length)).toEqual(new Array(CLIENTS).fill(INCREMENTS_PER_CLIENT));
        expect(conflicts).toBeGreaterThan(0); // the keys really were contended

        for (const key of KEYS) {
          const mine = successes.filter((s) => s.key === key);
          const entry = await tables[0].get(family, key);
          expect(entry?.value).toBe(mine.length);
          checkChain(key, initial.get(key)!, mine, entry!.version);
        }
        console.log(`concurrency-increments (${label}): ${successes.length} successful increments on ${KEYS.length} keys by ${CLIENTS} clients, ${conflicts} conflicts, no lost update`);
      } finally {
        for (const f of factories) await f.close();
      }
    },
    90_000,
  );
});

/** One client's loop: pick a hot key, read it, replace it with value + 1 at the version read. */
async function runClient(table: import('../../client').KeyValueTable<string, unknown>, family: string | null, client: number, deadline: number): Promise<{ successes: Success[]; conflicts: number }> {
  const random = mulberry32(1000 + client);
  const successes: Success[] = [];
  let conflicts = 0;
  for (let attempt = 0; successes.length < INCREMENTS_PER_CLIENT && attempt < MAX_ATTEMPTS_PER_CLIENT && Date.now() < deadline; attempt++) {
    const key = KEYS[Math.floor(random() * KEYS.length)];
    const current = await table.get(family, key);
    const value = (current!.value as number) + 1;
    try {
      const produced = await table.replace(family, key, value, current!.version);
      successes.push({ key, expected: current!.version.toString(), produced, value });
    } catch (err) {
      if (!(err instanceof BadKeyVersionError)) throw err;
      conflicts++;
    }
  }
  return { successes, conflicts };
}

/**
 * The history checker: sorted by produced version (strictly increasing within the key's segment),
 * successful replaces must chain: the first expects the seed version, each next one expects the
 * version its predecessor produced, values count 1, 2, 3, … and the last produced is the current one.
 */
function checkChain(key: string, seed: Version, successes: Success[], current: Version): void {
  const ordered = [...successes].sort((a, b) => a.produced.compareTo(b.produced));
  let previous = seed;
  ordered.forEach((s, i) => {
    expect(s.expected, `${key}: increment ${i + 1} expected the version of increment ${i}`).toBe(previous.toString());
    expect(s.value, `${key}: increment ${i + 1} wrote the wrong count`).toBe(i + 1);
    previous = s.produced;
  });
  expect(current.toString(), `${key}: the current version is the last successful replace`).toBe(previous.toString());
}
