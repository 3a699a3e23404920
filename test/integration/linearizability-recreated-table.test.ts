/**
 * Linearizability across a table deleted and created again with other partition counts under live
 * handles (issue 39), through real processes: six clients, each with its own factory and one handle
 * kept for the whole run, run the workload of test/harness/recreation-workload.ts (get, getAll,
 * entryIterator pages, put, replace with versions that may be of an earlier incarnation, putIfAbsent,
 * remove, batches, getAll of several family-less keys spread over the partitions, scanEntries of the
 * whole table) on two short key families, one of 2,048 bytes and ten family-less keys, while the
 * table is deleted and created again every 0.3 to 0.7 s, each time with another partition
 * count (1 to 6).
 *
 * A correct history across re-creations (test/harness/incarnations.ts): each incarnation is a fresh
 * table; an operation's answer comes from the incarnation its versions name, which must have existed
 * during the call; an operation that names none belongs to the one incarnation whose lifetime it
 * overlaps, and one that spans a delete and the create after it may have met either (an update is of
 * unknown outcome in both, an observation is not checked); each incarnation's history must be
 * linearizable from an empty table; a call may fail with TableNotFoundError or TableNotActiveError
 * only when it overlaps a delete and the create after it, and with UnavailableError at any time.
 * (Before the fix, a family-less getAll of a handle whose routing was stale sent every key to one
 * partition and read keys of others as absent, and scanEntries scanned the old partitions only.)
 *
 * KVT_LINEAR_RECREATE_SECONDS (default 6) and KVT_LINEAR_SEED (default 1) run it longer or with other seeds.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers, TableNotActiveError, TableNotFoundError } from '../../client';
import { modelKnob } from '../harness/engine-model';
import { attribute, Incarnation, misplacedFailures } from '../harness/incarnations';
import { checkKvHistory } from '../harness/kv-model';
import { HistoryRecorder, longFamily } from '../harness/kv-workload';
import { keepHistory, violationsOf } from '../harness/linearizability-cluster';
import { fetchRouting, mulberry32 } from '../harness/oracle';
import { TestCluster } from '../harness/process';
import { RecreationClient } from '../harness/recreation-workload';

const SECONDS = modelKnob('KVT_LINEAR_RECREATE_SECONDS', 6);
const SEED = modelKnob('KVT_LINEAR_SEED', 1);
const CLIENTS = 6;
const MAX_OPS_PER_CLIENT = 3_000;
/** The partition counts of the incarnations, in turn: each differs from the one before. */
const PARTITION_COUNTS = [2, 5, 1, 3, 6, 4];
const TABLE = 'again';
/** Incarnations at most, whatever the machine's speed (the time usually ends the run first). */
const MAX_INCARNATIONS = 100;
const CLIENT = { timeoutMs: 2_000, retry: { maxRetries: 6, initialBackoffMs: 25, maxBackoffMs: 300 } };

describe('linearizability across a table deleted and created again with other partition counts under live handles', () => {
  let cluster: TestCluster;
  let manager: KeyValueTableManager;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('lin');
  });
  afterAll(async () => {
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  /** Creates incarnation `index` of the table (it must not exist) and records it. */
  async function create(incarnations: Incarnation[], index: number): Promise<void> {
    const partitionCount = PARTITION_COUNTS[index % PARTITION_COUNTS.length];
    const createInvokedAt = performance.now();
    expect(await manager.createKeyValueTable('lin', TABLE, { partitionCount }), `incarnation ${index} is created`).toBe(true);
    const createdAt = performance.now();
    const routing = await fetchRouting(cluster.controllerAddress, 'lin', TABLE);
    incarnations.push({ index, partitionCount, segments: new Set(routing.partitions.map((p) => p.segmentId)), createInvokedAt, createdAt });
  }

  /** Deletes the table and creates it again with the next partition count, every 0.3–0.7 s until `end`. */
  async function recreate(incarnations: Incarnation[], end: number, rand: () => number): Promise<void> {
    for (let index = 1; index < MAX_INCARNATIONS; index++) {
      await new Promise((r) => setTimeout(r, 300 + Math.floor(rand() * 400)));
      if (Date.now() + 500 >= end) return;
      const current = incarnations[incarnations.length - 1];
      current.deleteInvokedAt = performance.now();
      expect(await manager.deleteKeyValueTable('lin', TABLE), `incarnation ${current.index} is deleted`).toBe(true);
      current.deletedAt = performance.now();
      await create(incarnations, index);
    }
  }

  it(
    `keeps each incarnation's history linearizable from an empty table, live handles following every re-creation (seed ${SEED}, ${SECONDS} s)`,
    async () => {
      const seed = SEED * 1000 + 900;
      const incarnations: Incarnation[] = [];
      await create(incarnations, 0);
      const keys = { families: ['f0', 'f1', longFamily('L0')], familyKeys: ['a1', 'a2', 'b1', 'b2'], soloKeys: Array.from({ length: 10 }, (_, i) => `s${i}`) };
      const recorder = new HistoryRecorder((err) => err instanceof TableNotFoundError || err instanceof TableNotActiveError);
      // The last client sends unary Execute and Iterate calls instead of stream messages.
      const factories = Array.from({ length: CLIENTS }, (_, c) =>
        KeyValueTableFactory.withScope('lin', {
          controller: cluster.controllerAddress,
          ...CLIENT,
          ...(c === CLIENTS - 1 ? { coalescing: { streams: false } } : {}),
        }),
      );
      let clients: RecreationClient[] = [];
      try {
        clients = factories.map(
          (f, c) => new RecreationClient(c, f.forKeyValueTable(TABLE, { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 }), recorder, keys, mulberry32(seed * 100 + c)),
        );
        const end = Date.now() + SECONDS * 1000;
        const recreating = recreate(incarnations, end, mulberry32(seed));
        await Promise.all(clients.map((c) => c.run(MAX_OPS_PER_CLIENT, () => Date.now() >= end)));
        await recreating;
        for (const c of clients) await c.readEverything();
      } finally {
        for (const f of factories) await f.close();
      }

      const attribution = attribute(recorder.ops, incarnations, (op) => clients[op.client].sharedAnswer(op));
      const check = checkKvHistory(attribution.ops);
      const found = [...attribution.violations, ...misplacedFailures(recorder.tolerated, incarnations), ...violationsOf(check)];
      const counts = recorder.counts;
      const shapes = { scans: clients.reduce((n, c) => n + c.shapes.scans, 0), getAllsAcross: clients.reduce((n, c) => n + c.shapes.getAllsAcross, 0) };
      console.log(
        `linearizability across re-creations: seed ${SEED}, ${SECONDS} s, ${incarnations.length} incarnations of ${incarnations.map((i) => i.partitionCount).join(',')} partitions, ` +
          `${recorder.ops.length} operations (${counts.acknowledged} acknowledged updates, ${counts.conditionFailed} failed conditions, ${counts.unknown} of unknown outcome, ` +
          `${counts.notApplied} not applied, ${counts.readsFailed} reads failed, ${recorder.tolerated.length} TableNotFound/TableNotActive), ${shapes.scans} scans, ${shapes.getAllsAcross} family-less getAlls; ` +
          `placed ${attribution.byAnswer} by their answers, ${attribution.byTime} by time, ${attribution.eitherUpdates} updates in two incarnations, ${attribution.ambiguousObservations} observations unchecked; ` +
          `per incarnation ${attribution.perIncarnation.join(',')}; checker ${check.groups.reduce((n, g) => n + g.ms, 0)} ms over ${check.groups.reduce((n, g) => n + g.states, 0)} states, ${found.length} violation(s)`,
      );
      if (found.length > 0) found.unshift(`history in ${keepHistory(recorder.ops, seed)}`);
      expect(recorder.unexpected).toEqual([]);
      expect(found.join('\n\n')).toBe('');

      // The handles lived through several re-creations, used every incarnation, and met the switches.
      expect(incarnations.length).toBeGreaterThanOrEqual(5);
      expect(attribution.perIncarnation.filter((n) => n < 20)).toEqual([]);
      expect(attribution.byAnswer).toBeGreaterThan(200);
      expect(shapes.scans).toBeGreaterThan(10);
      expect(shapes.getAllsAcross).toBeGreaterThan(20);
      expect(recorder.tolerated.length + attribution.eitherUpdates + attribution.ambiguousObservations).toBeGreaterThan(0);
    },
    (SECONDS + 60) * 1000,
  );
});
