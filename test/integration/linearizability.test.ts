/**
 * Linearizability of the client-visible operations under crashes (Jepsen / Knossos style), through
 * real processes: six clients, each with its own factory (its own connections and coalescer), run a
 * random mix of get, getAll, entryIterator pages, put, putIfAbsent, replace, remove with and without
 * a version, putAll, replaceAll, removeAll and update (with range removals) on six key families of
 * five keys (on each store two short ones and one whose name is 2,048 bytes long, the longest
 * allowed, which travels with every modification and get key) and four family-less keys (two on
 * each store, read together by getAll across both stores, which is atomic per key only, so checked
 * key by key), while segment stores are SIGKILLed or stopped and restarted (now and then on a new
 * port) and the controller is SIGKILLed and restarted, each on its own schedule (see injectFaults).
 * Every operation is recorded with its invocation and completion times and its result (test/harness/kv-workload.ts);
 * at the end each client reads every key once more. The history must be linearizable against a
 * sequential versioned key-value map, group by group (test/harness/kv-model.ts): every read sees the
 * latest write, conditions succeed exactly when the version matches, batches are atomic, versions
 * increase in the order writes take effect, a write with a TTL (30–200 ms, 15% of writes) is gone
 * exactly between its TTL after its invocation and its TTL after its acknowledgment, and an operation
 * of unknown outcome took effect once at some point after its invocation, or never. A second test stalls a store's disk to SIGKILL it at the
 * moment a write is staged and not yet durable.
 *
 * A third runs stores that hold their logged writes back from LevelDB for seconds
 * (`--durable-log-apply-ms`) and cache no chunks, on two key families spanning ten chunks each
 * (test/harness/wide-workload.ts): aligned runs filling them, whole chunks removed by a range, key by
 * key and up to the family's end, ranges across a chunk boundary, a chunk removed and rewritten in one
 * update, each followed at once by a get and a getAll of the keys removed and around the boundary;
 * runs that split a chunk in the same flush as a write bigger than an apply slice; iterations both
 * ways in small pages; stores SIGKILLed now and then (their logs replayed). Its length is
 * KVT_LINEAR_WIDE_SECONDS (default 10).
 *
 * Batches near the message limit in such long families, and a table deleted and created again with
 * other partition counts under live handles: linearizability-large-batches.test.ts and
 * linearizability-recreated-table.test.ts.
 *
 * KVT_LINEAR_ROUNDS (default 1) rounds of KVT_LINEAR_SECONDS (default 20) each, on a fresh table each,
 * and KVT_LINEAR_SEED (default 1) run it longer or with other seeds; the seed is printed with every
 * failure and in the summary line.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers } from '../../client';
import { modelKnob } from '../harness/engine-model';
import { checkKvHistory, groupsObservingExpiry } from '../harness/kv-model';
import { HistoryRecorder, longFamily, WorkloadClient, WorkloadKeys } from '../harness/kv-workload';
import { createTable, keepHistory, killStores, spread } from '../harness/linearizability-cluster';
import { paddedValues, WIDE_CHUNK_KEYS, WideFamilyClient, wideKey } from '../harness/wide-workload';
import { mulberry32, ownerOf } from '../harness/oracle';
import { DiskStall } from '../harness/disk-stall';
import { freePort, startController, startSegmentStore, tempDir, TestCluster } from '../harness/process';

const ROUNDS = modelKnob('KVT_LINEAR_ROUNDS', 1);
const SECONDS = modelKnob('KVT_LINEAR_SECONDS', 20);
const SEED = modelKnob('KVT_LINEAR_SEED', 1);
const CLIENTS = 6;
/** Operations per client and round, whatever the machine's speed (the round's time usually ends it first). */
const MAX_OPS_PER_CLIENT = 5_000;
const FAMILIES_PER_STORE = 2;
/** Key families on each store whose names are MAX_KEY_FAMILY_LENGTH (2,048) bytes long. */
const LONG_FAMILIES_PER_STORE = 1;
const FAMILY_KEYS = ['a1', 'a2', 'b1', 'b2', 'c1'];
/** Family-less keys on each store (each its own partition's, so a getAll of them reads both stores). */
const SOLO_KEYS_PER_STORE = 2;
const CLIENT = { timeoutMs: 2_000, retry: { maxRetries: 6, initialBackoffMs: 25, maxBackoffMs: 300 } };
/**
 * How far apart the stores' clock (Date.now, by which entries expire) and the history's
 * (performance.now) may be for an expiry, besides their drift during the round, which is measured.
 */
const TTL_SLACK_MS = 10;
/** The wide-family variant: its length (KVT_LINEAR_WIDE_SECONDS), clients, keys (10 chunks' worth), and its stores' flags. */
const WIDE_SECONDS = modelKnob('KVT_LINEAR_WIDE_SECONDS', 10);
const WIDE_CLIENTS = 4;
const WIDE_KEYS = 10 * WIDE_CHUNK_KEYS;
/**
 * Logged writes wait up to 3 s for LevelDB (readers' iterators and the log's size apply them sooner);
 * no chunk cache, so that point reads take the chunks the overlay does not hold from LevelDB.
 */
const HELD_BACK = ['--durable-log-apply-ms', '3000', '--chunk-cache-mb', '0'];

/** The wall clock (the stores' expiry clock) minus the monotonic one the history is recorded by. */
const clockGap = (): number => Date.now() - (performance.timeOrigin + performance.now());

type Fault = 'store SIGKILL' | 'store SIGTERM' | 'store moved' | 'controller SIGKILL';

describe('linearizability of the client operations under crashes', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2, stableStorePorts: true });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it(
    `keeps every group's history linearizable through store and controller crashes (seed ${SEED}, ${ROUNDS} × ${SECONDS} s)`,
    async () => {
      /** Violations, of every round (a soak goes on to find them all). */
      const problems: string[] = [];
      const totals = { ops: 0, unknown: 0, conditionFailed: 0, notApplied: 0, pages: 0, checkMs: 0, states: 0, expiries: 0, expiryGroups: 0, driftMs: 0 };
      const faults: Record<Fault, number> = { 'store SIGKILL': 0, 'store SIGTERM': 0, 'store moved': 0, 'controller SIGKILL': 0 };
      for (let round = 0; round < ROUNDS; round++) {
        const seed = SEED * 1000 + round;
        const where = `seed ${SEED}, round ${round}`;
        const table = `lin${round}`;
        const keys = await prepareTable(cluster, table);
        const recorder = new HistoryRecorder();
        const gapBefore = clockGap();
        // The last client sends unary Execute and Iterate calls instead of stream messages: both transports, same history.
        const factories = Array.from({ length: CLIENTS }, (_, c) =>
          KeyValueTableFactory.withScope('lin', {
            controller: cluster.controllerAddress,
            ...CLIENT,
            ...(c === CLIENTS - 1 ? { coalescing: { streams: false } } : {}),
          }),
        );
        try {
          const clients = factories.map(
            (f, c) => new WorkloadClient(c, f.forKeyValueTable(table, { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 }), recorder, keys, mulberry32(seed * 100 + c)),
          );
          const end = Date.now() + SECONDS * 1000;
          // On a machine too busy for the round to reach the workload it asserts below in SECONDS, the
          // clients go on (the faults do not) until it has, for at most twice as long again.
          const latest = end + 2 * SECONDS * 1000;
          const enough = (): boolean => recorder.counts.acknowledged > 200 && recorder.counts.conditionFailed > 20 && recorder.counts.pages > 20;
          const faulting = injectFaults(cluster, seed, end, faults);
          await Promise.all(clients.map((c) => c.run(MAX_OPS_PER_CLIENT, () => Date.now() >= latest || (Date.now() >= end && enough()))));
          await faulting;
          // Everything is up again: a last read of every key by every client.
          for (const c of clients) await c.readEverything();
        } finally {
          for (const f of factories) await f.close();
        }
        expect(recorder.unexpected, where).toEqual([]);

        const driftMs = Math.abs(clockGap() - gapBefore);
        const check = checkKvHistory(recorder.ops, { ttlSlackMs: TTL_SLACK_MS + driftMs });
        const found = [...check.conflicts, ...check.groups.filter((g) => g.verdict !== 'linearizable').map((g) => g.report ?? `${g.group}: the search gave up after ${g.states} states`)];
        // The whole history stays for a second look (checkKvHistory on the file's operations).
        if (found.length > 0) problems.push(`${where}: history of the round in ${keepHistory(recorder.ops, seed)}`);
        for (const problem of found) problems.push(`${where}: ${problem}`);
        const counts = recorder.counts;
        // The workload really did contend and really met faults (a round without them checks little).
        expect(counts.acknowledged, where).toBeGreaterThan(200);
        expect(counts.conditionFailed, where).toBeGreaterThan(20);
        expect(counts.pages, where).toBeGreaterThan(20);
        totals.ops += recorder.ops.length;
        totals.unknown += counts.unknown;
        totals.conditionFailed += counts.conditionFailed;
        totals.notApplied += counts.notApplied;
        totals.pages += counts.pages;
        totals.checkMs += check.groups.reduce((n, g) => n + g.ms, 0);
        totals.states += check.groups.reduce((n, g) => n + g.states, 0);
        totals.expiries += check.groups.reduce((n, g) => n + g.expiries, 0);
        totals.expiryGroups += groupsObservingExpiry(recorder.ops).length;
        totals.driftMs = Math.max(totals.driftMs, driftMs);
      }
      console.log(
        `linearizability: seed ${SEED}, ${ROUNDS} round(s) of ${SECONDS} s, ${totals.ops} operations checked (${totals.pages} iterator pages, ` +
          `${totals.conditionFailed} failed conditions, ${totals.unknown} of unknown outcome; ${totals.notApplied} surely not applied left out), ` +
          `${totals.expiries} expiries (${totals.expiryGroups} group histories linearizable only with them; clocks drifted ${totals.driftMs.toFixed(1)} ms), ` +
          `faults ${JSON.stringify(faults)}, checker ${totals.checkMs} ms over ${totals.states} states, ${problems.length} violation(s)`,
      );
      expect(problems.join('\n\n')).toBe('');
      // Reads did meet keys gone by expiry (else the TTLs checked nothing).
      expect(totals.expiryGroups).toBeGreaterThan(0);
      expect(faults['store SIGKILL'] + faults['store SIGTERM'] + faults['controller SIGKILL']).toBeGreaterThanOrEqual(3 * ROUNDS);
      expect(totals.unknown).toBeGreaterThan(0);
    },
    (ROUNDS * (SECONDS + 40) + 30) * 1000,
  );
});

describe('linearizability of a condition checked against a write that a crash takes back', () => {
  it('answers the failed condition only once that write is durable (a store whose disk stalls, SIGKILLed)', async () => {
    using dir = tempDir('kvt-lin-stall-');
    const hold = path.join(dir.path, 'hold');
    const controller = await startController(path.join(dir.path, 'controller'));
    const storeDir = path.join(dir.path, 'store');
    const port = ['--port', String(await freePort())];
    let store = await startSegmentStore(storeDir, controller.address, port, new DiskStall(hold).env());
    const factories = Array.from({ length: 3 }, () => KeyValueTableFactory.withScope('lin', { controller: controller.address, ...CLIENT }));
    try {
      await store.waitForLog('registered with controller');
      await using manager = new KeyValueTableManager({ controller: controller.address });
      await manager.createScope('lin');
      await manager.createKeyValueTable('lin', 'stall', { partitionCount: 1 });
      const recorder = new HistoryRecorder();
      const keys = { families: ['f'], familyKeys: ['a1'], soloKeys: [] };
      const [writer, first, second] = factories.map(
        (f, c) => new WorkloadClient(c, f.forKeyValueTable('stall', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 }), recorder, keys, mulberry32(c)),
      );
      await writer.put('f', 'a1');
      for (const c of [first, second]) await c.read('f', ['a1']);

      // The first replace is staged and its write stalls; the second, at the same version, fails on
      // it. Then the store dies with the write not done. (The second used to be answered
      // BAD_KEY_VERSION at once, though after the restart the version it named was current again.)
      fs.writeFileSync(hold, '');
      const replaced = first.replace('f', 'a1', first.seenVersion('f', 'a1')!);
      for (let i = 0; i < 1_000 && !fs.existsSync(`${hold}.waiting`); i++) await new Promise((r) => setTimeout(r, 10));
      expect(fs.existsSync(`${hold}.waiting`), 'the store stalls writing the first replace').toBe(true);
      const failed = second.replace('f', 'a1', second.seenVersion('f', 'a1')!);
      await Promise.race([failed, new Promise((r) => setTimeout(r, 2_000))]);
      await store.kill('SIGKILL');
      fs.rmSync(hold);
      store = await startSegmentStore(storeDir, controller.address, port);
      await store.waitForLog('registered with controller');
      await Promise.all([replaced, failed]);
      await writer.read('f', ['a1']);

      expect(recorder.unexpected).toEqual([]);
      const check = checkKvHistory(recorder.ops);
      expect(check.conflicts).toEqual([]);
      expect(check.groups.map((g) => g.report ?? g.verdict).join('\n')).toBe('linearizable');
    } finally {
      for (const f of factories) await f.close();
      await store.stop();
      await controller.stop();
    }
  });
});

describe("linearizability of key families spanning many chunks, with the stores' applies held back for seconds", () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2, stableStorePorts: true, storeArgs: HELD_BACK });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it(
    `keeps every wide family's history linearizable through whole-chunk removals, cut boundaries, reads right after and iterations both ways (seed ${SEED}, ${WIDE_SECONDS} s)`,
    async () => {
      const seed = SEED * 1000 + 500;
      const table = 'wide';
      const routing = await createTable(cluster, table);
      const keys: WorkloadKeys = { families: spread(routing, table, (i) => `w${i}`, 1), familyKeys: Array.from({ length: WIDE_KEYS }, (_, i) => wideKey(i)), soloKeys: [] };
      // A ballast family beside each wide family, on its store.
      const ballasts = spread(routing, table, (i) => `ballast${i}`, 1);
      const ballastFamily = new Map(keys.families.map((f) => [f, ballasts.find((b) => ownerOf(routing, b) === ownerOf(routing, f))!]));
      const recorder = new HistoryRecorder();
      const gapBefore = clockGap();
      const kills = { count: 0 };
      const factories = Array.from({ length: WIDE_CLIENTS }, () => KeyValueTableFactory.withScope('lin', { controller: cluster.controllerAddress, ...CLIENT }));
      let clients: WideFamilyClient[] = [];
      try {
        clients = factories.map(
          (f, c) => new WideFamilyClient(c, f.forKeyValueTable(table, { keySerializer: Serializers.utf8, valueSerializer: paddedValues() }), recorder, keys, mulberry32(seed * 100 + c), ballastFamily),
        );
        const end = Date.now() + WIDE_SECONDS * 1000;
        const killing = killStores(cluster, seed, end, kills, HELD_BACK);
        await Promise.all(clients.map((c) => c.run(MAX_OPS_PER_CLIENT, () => Date.now() >= end)));
        await killing;
        for (const c of clients) await c.readEverything();
      } finally {
        for (const f of factories) await f.close();
      }
      expect(recorder.unexpected).toEqual([]);
      const check = checkKvHistory(recorder.ops, { ttlSlackMs: TTL_SLACK_MS + Math.abs(clockGap() - gapBefore) });
      const found = [...check.conflicts, ...check.groups.filter((g) => g.verdict !== 'linearizable').map((g) => g.report ?? `${g.group}: the search gave up after ${g.states} states`)];
      const shapes = clients.reduce(
        (sum, c) => {
          for (const [k, v] of Object.entries(c.shapes)) sum[k] = (sum[k] ?? 0) + v;
          return sum;
        },
        {} as Record<string, number>,
      );
      const counts = recorder.counts;
      console.log(
        `linearizability of wide families: seed ${SEED}, ${WIDE_SECONDS} s, ${recorder.ops.length} operations checked (${counts.pages} iterator pages, ${counts.conditionFailed} failed conditions, ` +
          `${counts.unknown} of unknown outcome), shapes ${JSON.stringify(shapes)}, ${kills.count} store SIGKILLs, checker ${check.groups.reduce((n, g) => n + g.ms, 0)} ms over ` +
          `${check.groups.reduce((n, g) => n + g.states, 0)} states, ${found.length} violation(s)`,
      );
      if (found.length > 0) found.unshift(`history in ${keepHistory(recorder.ops, seed)}`);
      expect(found.join('\n\n')).toBe('');
      // The workload did what it is for.
      expect(counts.acknowledged).toBeGreaterThan(100);
      expect(counts.pages).toBeGreaterThan(20);
      expect(shapes.readsAfter).toBeGreaterThan(20);
    },
    (WIDE_SECONDS + 60) * 1000,
  );
});

/** Creates table `name` and picks its families and family-less keys on each store: FAMILIES_PER_STORE, LONG_FAMILIES_PER_STORE and SOLO_KEYS_PER_STORE. */
async function prepareTable(cluster: TestCluster, name: string): Promise<WorkloadKeys> {
  const routing = await createTable(cluster, name);
  const families = [...spread(routing, name, (i) => `f${i}`, FAMILIES_PER_STORE), ...spread(routing, name, (i) => longFamily(`L${i}`), LONG_FAMILIES_PER_STORE)];
  return { families, familyKeys: FAMILY_KEYS, soloKeys: spread(routing, name, (i) => `s${i}`, SOLO_KEYS_PER_STORE) };
}

/**
 * Crashes and restarts processes at random moments until `end`, each store and the controller on its
 * own schedule (so faults overlap at times): a store SIGKILLed or stopped and restarted at once, on
 * its port or now and then on a new one (which the controller accepts once the old address has been
 * silent for its store timeout, and the clients learn from it); the controller SIGKILLed and restarted
 * on its own port (which the clients know).
 */
async function injectFaults(cluster: TestCluster, seed: number, end: number, faults: Record<Fault, number>): Promise<void> {
  const controllerPort = cluster.controller.port;
  const pause = (rand: () => number, from: number, spread: number) => new Promise((r) => setTimeout(r, from + Math.floor(rand() * spread)));
  const storeFaults = cluster.stores.map(async (_, store) => {
    const rand = mulberry32(seed * 10 + store);
    for (await pause(rand, 200, 800); Date.now() + 2_000 < end; await pause(rand, 200, 800)) {
      const fault: Fault = rand() < 0.75 ? 'store SIGKILL' : 'store SIGTERM';
      faults[fault]++;
      const moves = rand() < 0.2;
      await cluster.stores[store].kill(fault === 'store SIGKILL' ? 'SIGKILL' : 'SIGTERM');
      await cluster.restartStore(store, moves ? await freePort() : cluster.stores[store].port);
      if (moves) faults['store moved']++;
    }
  });
  const controllerFaults = (async () => {
    const rand = mulberry32(seed * 10 + 9);
    for (await pause(rand, 1_000, 3_000); Date.now() + 2_000 < end; await pause(rand, 1_000, 3_000)) {
      faults['controller SIGKILL']++;
      await cluster.controller.kill('SIGKILL');
      await pause(rand, 0, 300);
      await cluster.restartController(controllerPort);
    }
  })();
  await Promise.all([...storeFaults, controllerFaults]);
}
