/**
 * W1–W6 of issue 5, written once against {@link Peer}:
 * W1 durable single-key put (100 B) at 64 and 256 callers; W2 point get over the point key space,
 * 64 callers, uniform and zipfian(0.99); W3 read-modify-write with a conditional replace (etcd: Txn
 * on mod_revision), zipfian over 10k keys; W4 atomic batch of 100 puts in one family (etcd: one Txn);
 * W5 ordered scan of 1,000-entry families (etcd: prefix range); W6 YCSB-A (50% read, 50% update,
 * zipfian) at a fixed rate with coordinated-omission-corrected latencies. Key families at scale
 * (issue 37): W7 one key into each new family, W8 a new key into an existing family, W9 point gets in
 * families of 100 keys, uniform and zipfian (etcd and raw LevelDB: keys under a family prefix).
 */
import { KeyChooser, keyName, uniformChooser, ValueSource, zipfianChooser } from './core/keys';
import { Operation } from './core/runner';
import { Peer } from './peers/peer';

/** Sizes and bounds of a run (quick or full). */
export interface BenchSettings {
  measureMs: number;
  /** Unmeasured closed-loop phase before each case. */
  warmupMs: number;
  /** Unmeasured puts and gets once per peer before its first case (JIT, connections, caches). */
  peerWarmupMs: number;
  maxOps: number;
  pointKeys: number;
  rmwKeys: number;
  scanFamilies: number;
  scanFamilySize: number;
  /** Families of the `families` dataset (W9), {@link FAMILY_SIZE} keys each. */
  families: number;
  /** Families of the `singles` dataset (W8), one key each, as W7 leaves them. */
  singleFamilies: number;
  w6Rate: number;
  w6DurationMs: number;
  valueBytes: number;
  /** The measured time of a case is split into this many rounds, in which the peers take turns. */
  rounds: number;
  /** After each peer's round, the longest wait for its servers to go idle (see core/cpu.ts waitUntilIdle). */
  settleMs: number;
  /**
   * Seed of the callers' random streams (keys, values, zipfian draws): one per round (see
   * measure.ts roundSettings), the same for every peer in that round. @default 1
   */
  seed?: number;
}

/** Data a case needs loaded first (once per server). */
export type Dataset = 'points' | 'rmw' | 'scan' | 'families' | 'singles';

/** Keys in each family of the `families` dataset (W9). */
export const FAMILY_SIZE = 100;

/** How a case drives load. */
export type Shape = { kind: 'closed'; concurrency: number } | { kind: 'fixed' };

/** Counters a case may keep beside the latency histogram. */
export type Extra = Record<string, number>;

/** One case of the benchmark. */
export interface CaseSpec {
  id: string;
  workload: string;
  title: string;
  unit: string;
  dataset?: Dataset;
  shape: Shape;
  /** Builds the operation for one peer; `extra` collects workload counters. */
  operation(peer: Peer, s: BenchSettings, extra: Extra): Operation;
}

/** Key spaces: point keys (W2, W6), RMW keys (W3), W1's own, and scan/batch families. */
export const SPACE = { point: 'p', rmw: 'r', w1: 'w', scanFamily: 'scan', batchFamily: 'batch', family: 'fam', familyKey: 'e', newFamily: 'new', single: 'one' } as const;

/** The one key each family of the `singles` dataset starts with, and the key W7 writes. */
export const FIRST_KEY = 'k000';

/** The key of entry `i` of a family of the `families` dataset. */
export function familyKeyName(i: number): string {
  return keyName(SPACE.familyKey, i);
}

function putCase(concurrency: number): CaseSpec {
  return {
    id: `W1-${concurrency}`,
    workload: 'W1',
    title: `durable single-key put, 100 B, ${concurrency} callers`,
    unit: 'puts',
    shape: { kind: 'closed', concurrency },
    operation(peer, s) {
      const values = new ValueSource(s.valueBytes);
      return async (_c, rand) => {
        await peer.put(keyName(SPACE.w1, Math.floor(rand() * s.pointKeys)), values.pick(rand));
        return 1;
      };
    },
  };
}

function getCase(distribution: 'uniform' | 'zipfian'): CaseSpec {
  return {
    id: `W2-${distribution === 'uniform' ? 'uni' : 'zipf'}`,
    workload: 'W2',
    title: `point get, ${distribution}, 64 callers`,
    unit: 'gets',
    dataset: 'points',
    shape: { kind: 'closed', concurrency: 64 },
    operation(peer, s, extra) {
      const choose: KeyChooser = distribution === 'uniform' ? uniformChooser(s.pointKeys) : zipfianChooser(s.pointKeys);
      extra.misses = 0;
      return async (_c, rand) => {
        if ((await peer.get(keyName(SPACE.point, choose(rand)))) === null) extra.misses++;
        return 1;
      };
    },
  };
}

/** How often one RMW re-reads and retries after a conflict before giving up. */
const MAX_RMW_ATTEMPTS = 50;

const rmwCase: CaseSpec = {
  id: 'W3',
  workload: 'W3',
  title: 'read-modify-write (conditional replace / Txn on mod_revision), zipfian over 10k keys, 64 callers',
  unit: 'successful RMWs',
  dataset: 'rmw',
  shape: { kind: 'closed', concurrency: 64 },
  operation(peer, s, extra) {
    const choose = zipfianChooser(s.rmwKeys);
    const values = new ValueSource(s.valueBytes);
    Object.assign(extra, { successes: 0, retries: 0, givenUp: 0 });
    return async (_c, rand) => {
      const key = keyName(SPACE.rmw, choose(rand));
      for (let attempt = 0; attempt < MAX_RMW_ATTEMPTS; attempt++) {
        const current = await peer.getVersioned(key);
        if (await peer.replaceIf(key, values.pick(rand), current.version)) {
          extra.successes++;
          return 1;
        }
        extra.retries++;
      }
      extra.givenUp++;
      return 0;
    };
  },
};

const batchCase: CaseSpec = {
  id: 'W4',
  workload: 'W4',
  title: 'atomic batch of 100 puts in one family (etcd: Txn of 100 puts), 16 callers',
  unit: 'entries',
  shape: { kind: 'closed', concurrency: 16 },
  operation(peer, s) {
    const values = new ValueSource(s.valueBytes);
    const keys = Array.from({ length: 100 }, (_, i) => keyName('k', i));
    return async (caller, rand) => {
      const family = `${SPACE.batchFamily}-${caller}-${Math.floor(rand() * 64)}`;
      await peer.putBatch(
        family,
        keys.map((key) => ({ key, value: values.pick(rand) })),
      );
      return keys.length;
    };
  },
};

const scanCase: CaseSpec = {
  id: 'W5',
  workload: 'W5',
  title: 'ordered scan of a 1,000-entry family (etcd: prefix range), 16 callers',
  unit: 'entries',
  dataset: 'scan',
  shape: { kind: 'closed', concurrency: 16 },
  operation(peer, s, extra) {
    extra.shortScans = 0;
    return async (_c, rand) => {
      const n = await peer.scanFamily(keyName(SPACE.scanFamily, Math.floor(rand() * s.scanFamilies)));
      if (n !== s.scanFamilySize) extra.shortScans++;
      return n;
    };
  },
};

const ycsbACase: CaseSpec = {
  id: 'W6',
  workload: 'W6',
  title: 'YCSB-A (50% get, 50% put, zipfian) at a fixed rate, latency from intended start',
  unit: 'ops',
  dataset: 'points',
  shape: { kind: 'fixed' },
  operation(peer, s) {
    const choose = zipfianChooser(s.pointKeys);
    const values = new ValueSource(s.valueBytes);
    return async (_c, rand) => {
      const key = keyName(SPACE.point, choose(rand));
      if (rand() < 0.5) await peer.get(key);
      else await peer.put(key, values.pick(rand));
      return 1;
    };
  },
};

/**
 * W7: each put creates a family (a name never used before: the round's seed, the caller and a count),
 * one 4-byte key in it. What a new page (issue 8) or document (issue 10) costs.
 */
const newFamilyCase: CaseSpec = {
  id: 'W7',
  workload: 'W7',
  title: 'one key into each new family, 64 callers',
  unit: 'puts',
  shape: { kind: 'closed', concurrency: 64 },
  operation(peer, s) {
    const values = new ValueSource(s.valueBytes);
    const counts = new Map<number, number>();
    return async (caller, rand) => {
      const n = counts.get(caller) ?? 0;
      counts.set(caller, n + 1);
      await peer.putInFamily(`${SPACE.newFamily}-${s.seed ?? 1}-${caller}-${n}`, FIRST_KEY, values.pick(rand));
      return 1;
    };
  },
};

/**
 * W8: a key never used before into a family of the `singles` dataset (families of one key, as W7
 * leaves them; they grow as W8 runs), chosen uniformly.
 */
const newKeyCase: CaseSpec = {
  id: 'W8',
  workload: 'W8',
  title: 'a new key into an existing family, 64 callers',
  unit: 'puts',
  dataset: 'singles',
  shape: { kind: 'closed', concurrency: 64 },
  operation(peer, s) {
    const values = new ValueSource(s.valueBytes);
    const choose = uniformChooser(s.singleFamilies);
    const counts = new Map<number, number>();
    return async (caller, rand) => {
      const n = counts.get(caller) ?? 0;
      counts.set(caller, n + 1);
      await peer.putInFamily(keyName(SPACE.single, choose(rand)), `n-${s.seed ?? 1}-${caller}-${n}`, values.pick(rand));
      return 1;
    };
  },
};

/** W9: a point get of a key of a family of the `families` dataset; the family uniform or zipfian, the key uniform. */
function familyGetCase(distribution: 'uniform' | 'zipfian'): CaseSpec {
  return {
    id: `W9-${distribution === 'uniform' ? 'uni' : 'zipf'}`,
    workload: 'W9',
    title: `point get in families of ${FAMILY_SIZE} keys, ${distribution}, 64 callers`,
    unit: 'gets',
    dataset: 'families',
    shape: { kind: 'closed', concurrency: 64 },
    operation(peer, s, extra) {
      const choose: KeyChooser = distribution === 'uniform' ? uniformChooser(s.families) : zipfianChooser(s.families);
      extra.misses = 0;
      return async (_c, rand) => {
        const family = keyName(SPACE.family, choose(rand));
        if ((await peer.getInFamily(family, familyKeyName(Math.floor(rand() * FAMILY_SIZE)))) === null) extra.misses++;
        return 1;
      };
    },
  };
}

/** Every case, in run order. */
export const CASES: readonly CaseSpec[] = [
  putCase(64),
  putCase(256),
  getCase('uniform'),
  getCase('zipfian'),
  rmwCase,
  batchCase,
  scanCase,
  ycsbACase,
  newFamilyCase,
  familyGetCase('uniform'),
  familyGetCase('zipfian'),
  newKeyCase,
];
