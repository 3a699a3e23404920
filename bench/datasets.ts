/**
 * Loads the data the read workloads need, once per server (etcd3 and etcd-grpc share one etcd),
 * before the first case that needs it. Loading is setup: it is not measured, and it is bounded in
 * time so a stuck peer fails the load instead of hanging the run.
 */
import { keyName, ValueSource } from './core/keys';
import { BatchEntry, Peer } from './peers/peer';
import { BenchSettings, Dataset, FAMILY_SIZE, familyKeyName, FIRST_KEY, SPACE } from './workloads';

/** Entries per load request: under etcd's default 128 operations per Txn. */
const CHUNK = 100;
/** Concurrent load requests. */
const LOAD_CONCURRENCY = 16;
/** Concurrent single puts when a peer has no bulk write for family-less keys. */
const PUT_CONCURRENCY = 256;

/** Runs `tasks` with at most `concurrency` at once; rejects after `timeoutMs`. */
export async function runBounded(tasks: Array<() => Promise<void>>, concurrency: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      if (Date.now() > deadline) throw new Error(`load did not finish within ${timeoutMs} ms (${next}/${tasks.length} tasks)`);
      await tasks[next++]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function keyedEntries(space: string, count: number, valueBytes: number): BatchEntry[] {
  const values = new ValueSource(valueBytes, 100_000);
  return Array.from({ length: count }, (_, i) => ({ key: keyName(space, i), value: values.at(i) }));
}

async function loadKeys(peer: Peer, entries: BatchEntry[], timeoutMs: number): Promise<void> {
  if (peer.putMany) {
    const putMany = peer.putMany.bind(peer);
    await runBounded(
      chunks(entries, CHUNK).map((c) => () => putMany(c)),
      LOAD_CONCURRENCY,
      timeoutMs,
    );
  } else {
    await runBounded(
      entries.map((e) => () => peer.put(e.key, e.value)),
      PUT_CONCURRENCY,
      timeoutMs,
    );
  }
}

async function loadFamilies(peer: Peer, s: BenchSettings, timeoutMs: number): Promise<void> {
  const tasks: Array<() => Promise<void>> = [];
  for (let f = 0; f < s.scanFamilies; f++) {
    const family = keyName(SPACE.scanFamily, f);
    for (const c of chunks(keyedEntries('e', s.scanFamilySize, s.valueBytes), CHUNK)) tasks.push(() => peer.putBatch(family, c));
  }
  await runBounded(tasks, LOAD_CONCURRENCY, timeoutMs);
}

/** The `families` dataset: `s.families` families of {@link FAMILY_SIZE} keys, each written by one batch. */
async function loadKeyFamilies(peer: Peer, s: BenchSettings, timeoutMs: number): Promise<void> {
  const values = new ValueSource(s.valueBytes, 100_000);
  const tasks = Array.from(
    { length: s.families },
    (_, f) => () =>
      peer.putBatch(
        keyName(SPACE.family, f),
        Array.from({ length: FAMILY_SIZE }, (_, i) => ({ key: familyKeyName(i), value: values.at(f * FAMILY_SIZE + i) })),
      ),
  );
  await runBounded(tasks, LOAD_CONCURRENCY, timeoutMs);
}

/** The `singles` dataset: `s.singleFamilies` families of one key each, written one put each (as W7 does). */
async function loadSingleFamilies(peer: Peer, s: BenchSettings, timeoutMs: number): Promise<void> {
  const values = new ValueSource(s.valueBytes, 200_000);
  const tasks = Array.from({ length: s.singleFamilies }, (_, f) => () => peer.putInFamily(keyName(SPACE.single, f), FIRST_KEY, values.at(f)));
  await runBounded(tasks, PUT_CONCURRENCY, timeoutMs);
}

/** Loads `dataset` through `peer`. */
export async function loadDataset(peer: Peer, dataset: Dataset, s: BenchSettings, timeoutMs: number): Promise<void> {
  switch (dataset) {
    case 'points':
      return loadKeys(peer, keyedEntries(SPACE.point, s.pointKeys, s.valueBytes), timeoutMs);
    case 'rmw':
      return loadKeys(peer, keyedEntries(SPACE.rmw, s.rmwKeys, s.valueBytes), timeoutMs);
    case 'scan':
      return loadFamilies(peer, s, timeoutMs);
    case 'families':
      return loadKeyFamilies(peer, s, timeoutMs);
    case 'singles':
      return loadSingleFamilies(peer, s, timeoutMs);
  }
}
