/**
 * The CouchDB endpoint when a segment store dies (issue 34): a PouchDB → kvt replication is
 * interrupted by a SIGKILL of one of the two segment stores; the endpoint answers 503 for what the
 * dead store holds (PouchDB's replication ends in an error, as CouchDB's would); after the store is
 * restarted on its data directory, the same replication resumes from its `_local` checkpoint — it
 * reads only what came after the last checkpoint, not everything again — and both databases end
 * identical.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KvtProcess, TestCluster } from '../harness/process';
import { expectSameDatabases, PouchDatabases, startCouch } from './couch-helpers';

const DOCUMENTS = 2000;
const BATCH = 100;
/** Batches written (and checkpointed but for the last) before the kill. */
const BATCHES_BEFORE_KILL = 4;
const idOf = (i: number): string => `doc-${String(i).padStart(5, '0')}`;

describe('kvt couch when a segment store is killed', () => {
  let cluster: TestCluster;
  let couch: KvtProcess;
  const pouches = new PouchDatabases();

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2, stableStorePorts: true });
    // Short deadlines: calls for the dead store's partitions fail within seconds.
    couch = await startCouch(cluster.controllerAddress, ['--scope', 'couch-faults', '--timeout-ms', '4000']);
  }, 120_000);
  afterAll(async () => {
    await pouches.dispose();
    await couch?.stop();
    await cluster?.[Symbol.asyncDispose]();
  });

  it('resumes an interrupted replication from its _local checkpoint after the store restarts, and ends identical', async () => {
    const source = pouches.local('source');
    for (let from = 0; from < DOCUMENTS; from += 500) {
      await source.bulkDocs(Array.from({ length: 500 }, (_, k) => ({ _id: idOf(from + k), n: from + k, text: `document ${from + k}` })));
    }
    const remote = pouches.remote(couch.port, 'interrupted');
    await remote.info();

    let killed: Promise<number | null> | undefined;
    let written = 0;
    const first = source.replicate.to(remote, { batch_size: BATCH, retry: false });
    first.on('change', (info) => {
      written = (info as { docs_written: number }).docs_written;
      if (killed === undefined && written >= BATCHES_BEFORE_KILL * BATCH) killed = cluster.stores[0].kill('SIGKILL');
    });
    const outcome = await Promise.resolve(first).then(
      (r) => ({ ok: true as const, r }),
      (err: { status?: number }) => ({ ok: false as const, status: err.status }),
    );
    expect(killed).toBeDefined();
    await killed;
    // The replication broke on the dead store's partitions with CouchDB's 503.
    expect(outcome).toEqual({ ok: false, status: 503 });
    expect(written).toBeLessThan(DOCUMENTS);

    await cluster.restartStore(0, cluster.stores[0].port);
    const resumed = await source.replicate.to(remote, { batch_size: BATCH });
    expect(resumed.ok).toBe(true);
    // It read only what came after the last checkpoint (at least BATCHES_BEFORE_KILL − 1 batches in).
    expect(resumed.docs_read).toBeLessThanOrEqual(DOCUMENTS - (BATCHES_BEFORE_KILL - 1) * BATCH);
    expect(resumed.docs_read).toBeGreaterThan(0);
    await expectSameDatabases(source, remote, [idOf(0), idOf(999), idOf(1999)]);
  }, 240_000);
});
