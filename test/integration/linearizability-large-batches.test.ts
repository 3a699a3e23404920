/**
 * Linearizability of calls near the message limit (issue 39), through real processes: 192 lanes
 * share one factory, so one coalescer packs their calls, and run full batches (putAll and update of
 * 256 keys), getAlls of 256 keys, single-key operations and iterations in key families whose names
 * are 2,048 bytes long (test/harness/big-batch-workload.ts): each batch or getAll carries over half a
 * MiB, nearly all of it the family, repeated with every key. Four lanes share each family; 40
 * families live on one store and 8 on the other, so that a hundred and more of these calls queue for
 * one store at once, while both stores are SIGKILLed and restarted now and then. The factory's
 * `coalescing.maxBytes` is the message limit itself (the coalescer then stops at MAX_EXECUTE_BYTES):
 * the calls it packs come as close to 64 MiB as they may.
 *
 * The history must be linearizable family by family (test/harness/kv-model.ts); no call may fail
 * but as an UnavailableError (a stream broken by a call over the limit failed every call on it, reads
 * as SERVICE_ERROR); the Execute calls, as a probe on the factory records them, must carry at most
 * 64 MiB each and come near it, and full batches must have been acknowledged (before the fix, none
 * was: the coalescer counted only key and value bytes and packed 512 of these batches, about 270 MiB,
 * into one message).
 *
 * KVT_LINEAR_BIG_SECONDS (default 6) and KVT_LINEAR_SEED (default 1) run it longer or with other seeds.
 * A machine too busy to exercise the workload in one window (CI beside other work once acknowledged
 * 400 operations, no failed condition and no kill in 6 s) gets up to four more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, Serializers } from '../../client';
import { MAX_MESSAGE_BYTES } from '../../proto/limits';
import { BIG_FAMILY_KEYS, BigBatchClient, BigBatchShapes, ExecuteCallProbe } from '../harness/big-batch-workload';
import { modelKnob } from '../harness/engine-model';
import { checkKvHistory } from '../harness/kv-model';
import { HistoryRecorder, longFamily } from '../harness/kv-workload';
import { createTable, keepHistory, killStores, onStores, violationsOf } from '../harness/linearizability-cluster';
import { mulberry32 } from '../harness/oracle';
import { TestCluster } from '../harness/process';

const SECONDS = modelKnob('KVT_LINEAR_BIG_SECONDS', 6);
const SEED = modelKnob('KVT_LINEAR_SEED', 1);
/** Long families on the crowded store and on the other one. */
const FAMILIES_ON_STORES = [72, 8];
const LANES_PER_FAMILY = 4;
/** Operations per lane, whatever the machine's speed (the time usually ends the run first). */
const MAX_OPS_PER_LANE = 60;
const MiB = 1024 * 1024;
/** More windows of SECONDS a busy machine may take to exercise what the test checks. */
const EXTRA_WINDOWS = 4;

/** Full batches (an update of every key of a family, or all but one) acknowledged so far. */
function fullBatchesOf(recorder: HistoryRecorder): number {
  return recorder.ops.filter((op) => op.f === 'update' && op.outcome.type === 'ok' && op.mods.length >= BIG_FAMILY_KEYS.length - 1).length;
}
/**
 * Deadlines long enough for a queue of a hundred MiB before a store (calls that time out would only
 * add outcomes the check must guess), the calls packed up to the message limit.
 */
const CLIENT = { timeoutMs: 15_000, retry: { maxRetries: 8, initialBackoffMs: 25, maxBackoffMs: 500 }, coalescing: { maxBytes: MAX_MESSAGE_BYTES } };

describe('linearizability of batches near the message limit in 2,048-byte key families', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2, stableStorePorts: true });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it(
    `keeps every family's history linearizable while one coalescer packs calls up to the message limit and the stores are SIGKILLed (seed ${SEED}, ${SECONDS} s)`,
    async () => {
      const seed = SEED * 1000 + 700;
      const routing = await createTable(cluster, 'big');
      const families = onStores(routing, 'big', (i) => longFamily(`big${i}`), FAMILIES_ON_STORES).flat();
      const recorder = new HistoryRecorder();
      const kills = { count: 0 };
      let windows = 1;
      const factory = KeyValueTableFactory.withScope('lin', { controller: cluster.controllerAddress, ...CLIENT });
      const probe = new ExecuteCallProbe(factory);
      let lanes: BigBatchClient[] = [];
      try {
        const table = factory.forKeyValueTable('big', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
        lanes = families.flatMap((family, f) =>
          Array.from({ length: LANES_PER_FAMILY }, (_, l) => {
            const lane = f * LANES_PER_FAMILY + l;
            return new BigBatchClient(lane, table, recorder, { families: [family], familyKeys: BIG_FAMILY_KEYS, soloKeys: [] }, mulberry32(seed * 1000 + lane));
          }),
        );
        // A window of SECONDS with kills; a machine too busy to exercise what the checks below need
        // (large calls, full batches, failed conditions, a kill) by then gets more windows, at most
        // EXTRA_WINDOWS (the history only grows, and is checked whole).
        for (; ; windows++) {
          const end = Date.now() + SECONDS * 1000;
          const killing = killStores(cluster, seed + windows - 1, end, kills);
          await Promise.all(lanes.map((lane) => lane.run(MAX_OPS_PER_LANE, () => Date.now() >= end)));
          await killing;
          const exercised = probe.atLeast(16 * MiB) >= 5 && fullBatchesOf(recorder) >= 20 && recorder.counts.conditionFailed > 0 && kills.count > 0;
          if (exercised || windows >= 1 + EXTRA_WINDOWS) break;
        }
        // Everything is up again: a last read of every family.
        for (const lane of lanes.filter((_, i) => i % LANES_PER_FAMILY === 0)) await lane.readEverything();
      } finally {
        await factory.close();
      }
      const check = checkKvHistory(recorder.ops);
      const found = violationsOf(check);
      const shapes = lanes.reduce(
        (sum, lane) => {
          for (const [k, v] of Object.entries(lane.shapes)) sum[k as keyof BigBatchShapes] += v;
          return sum;
        },
        { putAll: 0, update: 0, getAll: 0, small: 0, iterations: 0 },
      );
      const fullBatches = fullBatchesOf(recorder);
      const counts = recorder.counts;
      console.log(
        `linearizability of large batches: seed ${SEED}, ${windows} × ${SECONDS} s, ${lanes.length} lanes on ${families.length} families, ${recorder.ops.length} operations checked ` +
          `(${fullBatches} full batches acknowledged, ${counts.conditionFailed} failed conditions, ${counts.unknown} of unknown outcome, ${counts.notApplied} surely not applied), ` +
          `shapes ${JSON.stringify(shapes)}, ${kills.count} store SIGKILLs; ${probe.calls.length} Execute calls carrying ${(probe.total / MiB).toFixed(0)} MiB, ` +
          `the largest ${(probe.largest / MiB).toFixed(1)} MiB, ${probe.atLeast(16 * MiB)} of 16 MiB or more, ${probe.atLeast(MAX_MESSAGE_BYTES + 1)} over the message limit; checker ${check.groups.reduce((n, g) => n + g.ms, 0)} ms over ` +
          `${check.groups.reduce((n, g) => n + g.states, 0)} states, ${found.length} violation(s)`,
      );
      if (found.length > 0) found.unshift(`history in ${keepHistory(recorder.ops, seed)}`);
      expect(recorder.unexpected).toEqual([]);
      expect(found.join('\n\n')).toBe('');

      // No call over a message; calls packed near it, many of them large; full batches acknowledged.
      expect(probe.calls.filter((bytes) => bytes > MAX_MESSAGE_BYTES).map((bytes) => `${bytes} bytes`)).toEqual([]);
      expect(probe.largest).toBeGreaterThan(48 * MiB);
      expect(probe.atLeast(16 * MiB)).toBeGreaterThanOrEqual(5);
      expect(fullBatches).toBeGreaterThanOrEqual(20);
      expect(counts.conditionFailed).toBeGreaterThan(0);
      expect(kills.count).toBeGreaterThan(0);
    },
    (SECONDS * (1 + EXTRA_WINDOWS) + 90) * 1000,
  );
});
