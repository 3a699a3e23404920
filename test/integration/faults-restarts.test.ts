/**
 * The whole cluster stopped and restarted 20 times under load (real processes, loopback): in each
 * cycle the writers run a short bounded phase while every process is stopped mid-flight in a seeded
 * random order with a seeded mix of SIGKILL and SIGTERM; then the controller comes back on its port
 * and the stores on new ports with their data directories. The same client objects live through all
 * cycles. At the end the oracle (the acknowledged-writes log: exact value and version per key; either
 * outcome for writes that failed with `maybeApplied`) matches a full scan of the table exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers, UnavailableError } from '../../client';
import { MixedLoad, OpRecord, partialBatches, readAll } from '../harness/load';
import { mulberry32, WriteOracle } from '../harness/oracle';
import { KvtProcess, TestCluster } from '../harness/process';

const CYCLES = 20;
const WRITERS = 12;
const SEED = 2024;
const CLIENT = { timeoutMs: 2_000, retry: { maxRetries: 6, initialBackoffMs: 25, maxBackoffMs: 300 } };

describe('the whole cluster restarted under load', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('restarts');
    await manager.createKeyValueTable('restarts', 'load', { partitionCount: 6 });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it(`matches the acknowledged-writes log exactly after ${CYCLES} crash-restart cycles`, async () => {
    const random = mulberry32(SEED);
    const controllerPort = cluster.controller.port;
    await using factory = KeyValueTableFactory.withScope('restarts', { controller: cluster.controllerAddress, ...CLIENT });
    const table = factory.forKeyValueTable('load', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    const oracle = new WriteOracle();
    const load = new MixedLoad([table], oracle, WRITERS, SEED);
    const signals = { SIGKILL: 0, SIGTERM: 0 };
    const unexpected: string[] = [];

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      let down = false;
      const crash = (async () => {
        await sleep(100 + Math.floor(random() * 300));
        const victims: KvtProcess[] = shuffle([cluster.controller, ...cluster.stores], random);
        for (const p of victims) {
          const signal = random() < 0.6 ? 'SIGKILL' : 'SIGTERM';
          signals[signal]++;
          await p.kill(signal);
        }
        down = true;
      })();
      const ops = await load.run(40, 3_000, () => down);
      await crash;
      unexpected.push(...failuresOtherThanUnavailable(ops, cycle));

      await cluster.restartController(controllerPort);
      for (let i = 0; i < cluster.stores.length; i++) await cluster.restartStore(i);
    }

    // A last phase on the running cluster: the same client objects find everything again.
    const final = await load.run(10, 15_000);
    expect(final.filter((op) => !op.ok).map((op) => `${op.kind} ${op.family}: ${String(op.error)}`)).toEqual([]);
    expect(unexpected).toEqual([]);

    const data = await readAll(table);
    expect(oracle.check(data)).toEqual([]);
    expect(partialBatches(data, WRITERS)).toEqual([]);
    expect(oracle.versionRegressions).toEqual([]);
    expect(oracle.observedMismatches).toEqual([]);
    expect(signals.SIGKILL).toBeGreaterThan(0);
    expect(signals.SIGTERM).toBeGreaterThan(0);
    console.log(
      `faults-restarts: ${CYCLES} cycles, ${signals.SIGKILL} SIGKILL + ${signals.SIGTERM} SIGTERM, ` +
        `${oracle.acknowledged} acknowledged writes, ${oracle.uncertain} of unknown outcome, ${data.size} keys checked`,
    );
  }, 180_000);
});

function failuresOtherThanUnavailable(ops: OpRecord[], cycle: number): string[] {
  return ops
    .filter((op) => !op.ok && !(op.error instanceof UnavailableError))
    .map((op) => `cycle ${cycle}: ${op.kind} ${op.family}: ${op.error instanceof Error ? `${op.error.name}: ${op.error.message}` : String(op.error)}`);
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
