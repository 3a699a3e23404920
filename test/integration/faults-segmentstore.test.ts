/**
 * SIGKILL of a segment store under a mixed load of 32 writers (real processes, loopback): calls for
 * its partitions fail with UnavailableError within their deadline (never hang) while the other
 * store's partitions keep serving; the store comes back on a new port with the same data directory
 * and the clients find it again; afterwards every acknowledged write is present (the oracle matches
 * the data exactly), no batch is partial and versions keep increasing.
 *
 * The same under coalesced batches near the message limit (issue 39): 304 writers in one factory, each
 * making putAlls of 256 keys and getAlls of them in a key family of its own whose name is 2,048
 * bytes long (over half a MiB a call, nearly all of it the family; test/harness/long-family-load.ts),
 * 288 of them on the store that is killed: with the store up, every call of their first burst
 * succeeds (a call over 64 MiB used to break the store's stream, failing every call on it, updates
 * as maybeApplied though none was sent); while it is killed, only calls for it fail, each as
 * UnavailableError, and those made once it was dead without maybeApplied (none can have reached it);
 * after its restart no acknowledged batch is lost and none is partial.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers, UnavailableError, Version } from '../../client';
import { MAX_MESSAGE_BYTES } from '../../proto/limits';
import { ExecuteCallProbe } from '../harness/big-batch-workload';
import { longFamily } from '../harness/kv-workload';
import { onStores } from '../harness/linearizability-cluster';
import { familiesOf, MixedLoad, OpRecord, partialBatches, readAll } from '../harness/load';
import { BatchCall, LongFamilyLoad, readFamily, SAMPLE_KEYS } from '../harness/long-family-load';
import { fetchRouting, ownerOf, WriteOracle } from '../harness/oracle';
import { KvtProcess, startSegmentStore, TestCluster } from '../harness/process';

const WRITERS = 32;
const CLIENT = { timeoutMs: 3_000, retry: { maxRetries: 3, initialBackoffMs: 20, maxBackoffMs: 200 } };
/**
 * Writers of full batches in long families, on the store killed and on the other: 288 calls of over
 * half a MiB for one store are more than two messages hold, however the coalescer shares them.
 */
const BIG_WRITERS_ON_STORES = [288, 16];
/** Deadlines long enough for the first burst (about 150 MiB for one store) on a slow machine. */
const BIG_CLIENT = { timeoutMs: 15_000, retry: { maxRetries: 3, initialBackoffMs: 20, maxBackoffMs: 200 } };
const MiB = 1024 * 1024;

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
        for (const giveUp = Date.now() + 3_000; load.finished < killFrom && Date.now() < giveUp;) await new Promise((r) => setTimeout(r, 5));
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
      console.log(
        `faults-segmentstore: ${oracle.acknowledged} acknowledged writes, ${oracle.uncertain} of unknown outcome, ` +
          `${victimOps.length} calls failed fast on the dead store, ${otherOps.length} served by the live one; revived on port ${revived.port} (was ${victim.port})`,
      );
    } finally {
      for (const f of factories) await f.close();
    }
  }, 90_000);
});

describe('a segment store killed under coalesced batches near the message limit', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('faults');
    await manager.createKeyValueTable('faults', 'big', { partitionCount: 4 });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('fails only the calls that met it, as UnavailableError, maybeApplied never once it was dead, and loses no acknowledged batch', async () => {
    const routing = await fetchRouting(cluster.controllerAddress, 'faults', 'big');
    const victim = cluster.stores[0];
    const victimId = storeIdOf(victim);
    // Most writers' families on the store killed (onStores numbers the stores as the names reach them).
    const name = (i: number) => longFamily(`w${i}`);
    const victimFirst = ownerOf(routing, name(0)) === victimId;
    const [first, second] = onStores(routing, 'big', name, victimFirst ? BIG_WRITERS_ON_STORES : [...BIG_WRITERS_ON_STORES].reverse());
    const [onVictimFamilies, otherFamilies] = victimFirst ? [first, second] : [second, first];
    const onVictim = new Set(onVictimFamilies);
    const factory = KeyValueTableFactory.withScope('faults', { controller: cluster.controllerAddress, ...BIG_CLIENT });
    const probe = new ExecuteCallProbe(factory);
    const table = factory.forKeyValueTable('big', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    const oracle = new WriteOracle();
    const load = new LongFamilyLoad(table, oracle, [...onVictimFamilies, ...otherFamilies], 11);
    try {
      // Both stores up: every call of the burst succeeds.
      const before = await load.run(1, 30_000);
      expect(before.filter((c) => c.error !== undefined).map(showCall)).toEqual([]);

      // Killed once the writers are under way again (at the latest after 5 s); it stays dead for the phase.
      let deadAt = Infinity;
      const killFrom = load.finished + onVictim.size / 2;
      const killer = (async () => {
        for (const giveUp = Date.now() + 5_000; load.finished < killFrom && Date.now() < giveUp;) await new Promise((r) => setTimeout(r, 5));
        await victim.kill('SIGKILL');
        deadAt = Date.now();
      })();
      const during = await load.run(2, 15_000);
      await killer;
      expect(during.filter((c) => c.error !== undefined && !(c.error instanceof UnavailableError)).map(showCall)).toEqual([]);
      expect(during.filter((c) => c.error !== undefined && !onVictim.has(c.family)).map(showCall)).toEqual([]);
      // A call made once the store was dead never reached it: its failure says so.
      const afterDeath = during.filter((c) => c.startedAt > deadAt && onVictim.has(c.family));
      expect(afterDeath.length).toBeGreaterThan(0);
      expect(afterDeath.filter((c) => c.error === undefined || (c.error as UnavailableError).maybeApplied).map(showCall)).toEqual([]);

      // Same data directory, new port: the families read back as acknowledged, whole batches.
      const revived = await startSegmentStore(path.join(cluster.root, 'segmentstore-0'), cluster.controllerAddress);
      cluster.stores[0] = revived;
      await revived.waitForLog('registered with controller');
      const data = new Map<string, { value: string; version: Version }>();
      const reads = await Promise.all(load.families.map((family) => readFamily(table, family, SAMPLE_KEYS)));
      reads.forEach((read, w) => {
        if ('mixed' in read) load.partial.push(`writer ${w}: ${read.mixed}`);
        else if (read.value !== null) data.set(load.families[w], { value: read.value, version: read.version! });
      });
      expect(load.partial).toEqual([]);
      expect(oracle.check(data)).toEqual([]);
      expect(oracle.observedMismatches).toEqual([]);
      expect(oracle.versionRegressions).toEqual([]);
      // The traffic was what the test is for: calls near the coalescer's 16 MiB, none over a message.
      expect(probe.calls.filter((bytes) => bytes > MAX_MESSAGE_BYTES).map((bytes) => `${bytes} bytes`)).toEqual([]);
      expect(probe.atLeast(12 * MiB)).toBeGreaterThanOrEqual(10);
      const failed = during.filter((c) => c.error !== undefined);
      console.log(
        `faults-segmentstore, long families: ${load.families.length} writers, ${oracle.acknowledged} acknowledged batches, ${oracle.uncertain} of unknown outcome, ` +
          `${failed.length} calls failed on the dead store (${afterDeath.length} made after it died, the longest failing call ${Math.max(...failed.map((c) => c.endedAt - c.startedAt))} ms ` +
          `against a ${BIG_CLIENT.timeoutMs} ms deadline); ${probe.calls.length} Execute calls carrying ${(probe.total / MiB).toFixed(0)} MiB, the largest ${(probe.largest / MiB).toFixed(1)} MiB`,
      );
    } finally {
      await factory.close();
    }
  }, 150_000);
});

function storeIdOf(store: KvtProcess): string {
  return String(store.logs.find((r) => r.msg === 'segment store started')?.storeId);
}

function showCall(c: BatchCall): string {
  const error =
    c.error instanceof UnavailableError
      ? `${c.error.name} (maybeApplied ${c.error.maybeApplied}): ${c.error.message}`
      : c.error instanceof Error
        ? `${c.error.name}: ${c.error.message}`
        : String(c.error);
  return `${c.kind} of writer ${c.writer}: ${c.error === undefined ? 'ok' : error}`;
}

/** Failures that are not UnavailableError (nothing else may happen under a store crash). */
function unexpected(ops: OpRecord[]): string[] {
  return ops.filter((op) => !op.ok && !(op.error instanceof UnavailableError)).map(show);
}

function show(op: OpRecord): string {
  return `${op.kind} ${op.family}: ${op.error instanceof Error ? `${op.error.name}: ${op.error.message}` : String(op.error)}`;
}
