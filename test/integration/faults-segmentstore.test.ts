/**
 * SIGKILL of a segment store under a mixed load of 32 writers (real processes, loopback): calls for
 * its partitions fail with UnavailableError within their deadline (never hang) while the other
 * store's partitions keep serving; the store comes back on a new port with the same data directory
 * and the clients find it again; afterwards every acknowledged write is present (the oracle matches
 * the data exactly), no batch is partial and versions keep increasing.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers, UnavailableError } from '../../client';
import { familiesOf, MixedLoad, OpRecord, partialBatches, readAll } from '../harness/load';
import { fetchRouting, ownerOf, WriteOracle } from '../harness/oracle';
import { startSegmentStore, TestCluster } from '../harness/process';

const WRITERS = 32;
const CLIENT = { timeoutMs: 3_000, retry: { maxRetries: 3, initialBackoffMs: 20, maxBackoffMs: 200 } };

describe('a segment store killed under load', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('faults');
    await manager.createKeyValueTable('faults', 'load', { partitionCount: 8 });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('fails only its partitions, comes back on a new port, and loses no acknowledged write', async () => {
    const factories = Array.from({ length: 4 }, () => KeyValueTableFactory.withScope('faults', { controller: cluster.controllerAddress, ...CLIENT }));
    const tables = factories.map((f) => f.forKeyValueTable('load', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 }));
    const oracle = new WriteOracle();
    const load = new MixedLoad(tables, oracle, WRITERS, 7);
    try {
      const routing = await fetchRouting(cluster.controllerAddress, 'faults', 'load');
      const victim = cluster.stores[0];
      const victimId = String(victim.logs.find((r) => r.msg === 'segment store started')?.storeId);
      const onVictim = (family: string) => ownerOf(routing, family) === victimId;
      const writersOnVictim = Array.from({ length: WRITERS }, (_, w) => w).filter((w) => onVictim(familiesOf(w).single) || onVictim(familiesOf(w).batch));
      expect(writersOnVictim.length).toBeGreaterThan(0);
      expect(writersOnVictim.length).toBeLessThan(WRITERS);

      const before = await load.run(20, 10_000);
      expect(unexpected(before)).toEqual([]);

      // Kill the store while the writers are running (once each did about 10 of its 60 operations,
      // however fast the stores are; at the latest after 3 s), then keep writing for a bounded while.
      let killedAt = Infinity;
      const killFrom = load.finished + WRITERS * 10;
      const killer = (async () => {
        for (const giveUp = Date.now() + 3_000; load.finished < killFrom && Date.now() < giveUp; ) await new Promise((r) => setTimeout(r, 5));
        await victim.kill('SIGKILL');
        killedAt = Date.now();
      })();
      const during = await load.run(60, 12_000);
      await killer;
      const afterKill = during.filter((op) => op.startedAt > killedAt);
      const victimOps = afterKill.filter((op) => onVictim(op.family));
      const otherOps = afterKill.filter((op) => !onVictim(op.family));
      expect(victimOps.length).toBeGreaterThan(0);
      expect(otherOps.length).toBeGreaterThan(0);
      for (const op of victimOps) expect(op.error, `${op.kind} on ${op.family}`).toBeInstanceOf(UnavailableError);
      expect(otherOps.filter((op) => !op.ok).map(show)).toEqual([]);
      expect(unexpected(during)).toEqual([]);

      // Same data directory, new ephemeral port: the clients refresh their routing and find it.
      const revived = await startSegmentStore(path.join(cluster.root, 'segmentstore-0'), cluster.controllerAddress);
      cluster.stores[0] = revived;
      await revived.waitForLog('registered with controller');
      const after = await load.run(20, 15_000);
      expect(after.filter((op) => !op.ok).map(show)).toEqual([]);

      const data = await readAll(tables[0]);
      expect(oracle.check(data)).toEqual([]);
      expect(partialBatches(data, WRITERS)).toEqual([]);
      expect(oracle.versionRegressions).toEqual([]);
      expect(oracle.observedMismatches).toEqual([]);
      expect(oracle.acknowledged).toBeGreaterThan(WRITERS * 20);
      console.log(`faults-segmentstore: ${oracle.acknowledged} acknowledged writes, ${oracle.uncertain} of unknown outcome, ` +
        `${victimOps.length} calls failed fast on the dead store, ${otherOps.length} served by the live one; revived on port ${revived.port} (was ${victim.port})`);
    } finally {
      for (const f of factories) await f.close();
    }
  }, 90_000);
});

/** Failures that are not UnavailableError (nothing else may happen under a store crash). */
function unexpected(ops: OpRecord[]): string[] {
  return ops.filter((op) => !op.ok && !(op.error instanceof UnavailableError)).map(show);
}

function show(op: OpRecord): string {
  return `${op.kind} ${op.family}: ${op.error instanceof Error ? `${op.error.name}: ${op.error.message}` : String(op.error)}`;
}
