/**
 * StoreRates (controller/ops/store-rates.ts) against real segment stores in this process, asked over
 * gRPC as the controller asks them, on a clock the test moves: what a store's figures are after one
 * sample, after two, over the 5 s window, and when a store restarts, dies or cannot be asked.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreRates } from '../../../controller/ops/store-rates';
import { SegmentStoreClients } from '../../../controller/service/segment-store-clients';
import { SegmentStoreServer } from '../../../segmentstore/server';
import { silentLogger } from '../../../server-kit/log';
import { freePort, tempDir } from '../../harness/process';
import { failureOf, RpcClient, segmentStoreClient } from '../../integration/controller-helpers';

const SEGMENT = '1';
const NO_OPERATIONS = { update: 0, get: 0, iterate: 0, scan: 0 };

describe('StoreRates', () => {
  const dir = tempDir('kvt-ops-rates-');
  const clients = new SegmentStoreClients(2_000);
  /** A store the test writes to, and one that never ran an operation. */
  let busy: SegmentStoreServer;
  let idle: SegmentStoreServer;
  let client: RpcClient;
  /** The addresses the rates asked, in order. */
  const asked: string[] = [];
  let now = 0;
  let written = 0;

  const newRates = () =>
    new StoreRates(
      (address, names, timeoutMs) => {
        asked.push(address);
        return clients.metrics(address, names, timeoutMs);
      },
      1_000,
      2_000,
      () => now,
    );
  const live = (storeId: string, address: string) => [{ storeId, address, live: true }];

  /** `n` puts of new keys, each its own Update (key "kN", value "v": 3 bytes an entry). */
  async function put(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      await client.call('Update', { segmentId: SEGMENT, modifications: [{ type: 'PUT', key: Buffer.from(`k${written++}`), value: Buffer.from('v') }] });
    }
  }

  beforeAll(async () => {
    busy = await SegmentStoreServer.start({ port: 0, dataDir: path.join(dir.path, 'busy') }, { log: silentLogger });
    idle = await SegmentStoreServer.start({ port: 0, dataDir: path.join(dir.path, 'idle') }, { log: silentLogger });
    client = segmentStoreClient(busy.address);
    await client.call('CreateSegment', { segmentId: SEGMENT, table: 's/t#0' });
  });
  afterAll(async () => {
    client?.close();
    clients.close();
    await busy?.stop();
    await idle?.stop();
    dir.dispose();
  });

  it("reads a store's operations summed over outcomes and its entries, a rate from two samples, and asks at most once a second", async () => {
    const rates = newRates();
    now = 0;
    await put(4);
    // A refused insert is an update operation too (outcome BAD_KEY_VERSION).
    const refused = await failureOf(client.call('Update', { segmentId: SEGMENT, modifications: [{ type: 'INSERT', key: Buffer.from('k0'), value: Buffer.from('v') }] }));
    expect(refused.kvtCode).toBe('BAD_KEY_VERSION');
    await rates.refresh(live('busy', busy.address));
    // One sample: figures, but no rate yet. (Later counts of entries may lag: the store spaces them.)
    expect(rates.figuresOf('busy')).toEqual({ operations: { ...NO_OPERATIONS, update: 5 }, entries: 4, bytes: 12 });

    // Asked again within the second: the store is not asked, the figures stay.
    now = 500;
    await put(2);
    await rates.refresh(live('busy', busy.address));
    expect(asked.filter((a) => a === busy.address)).toHaveLength(1);
    expect(rates.figuresOf('busy')?.operations?.update).toBe(5);

    now = 2_000;
    await rates.refresh(live('busy', busy.address));
    expect(rates.figuresOf('busy')).toEqual({ operations: { ...NO_OPERATIONS, update: 7 }, entries: expect.any(Number), bytes: expect.any(Number), opsPerSecond: { ...NO_OPERATIONS, update: 1 } });
    // The oldest sample within 5 s against the newest: 2 updates in 4 s, then none in the 4 s before 8 s.
    now = 4_000;
    await rates.refresh(live('busy', busy.address));
    expect(rates.figuresOf('busy')?.opsPerSecond).toEqual({ ...NO_OPERATIONS, update: 0.5 });
    now = 8_000;
    await rates.refresh(live('busy', busy.address));
    expect(rates.figuresOf('busy')?.opsPerSecond).toEqual(NO_OPERATIONS);
  });

  it('lets a request during a sampling round wait for that round', async () => {
    const rates = newRates();
    now = 10_000;
    const first = rates.refresh(live('busy', busy.address));
    await rates.refresh(live('busy', busy.address));
    expect(rates.figuresOf('busy')?.operations?.update).toBeGreaterThan(0);
    await first;
  });

  it('shows no rate for a store whose counters went back (it restarted), until it has two new samples', async () => {
    const rates = newRates();
    now = 20_000;
    await rates.refresh(live('x', busy.address));
    now = 22_000;
    // Same store id, now with counters of a store that ran nothing: as after a restart.
    await rates.refresh(live('x', idle.address));
    expect(rates.figuresOf('x')).toEqual({ operations: NO_OPERATIONS, entries: 0, bytes: 0 });
    now = 24_000;
    await rates.refresh(live('x', idle.address));
    expect(rates.figuresOf('x')?.opsPerSecond).toEqual(NO_OPERATIONS);
  });

  it('does not ask a dead store, keeps its last figures without a rate, and starts a new history once it is live again', async () => {
    const rates = newRates();
    now = 30_000;
    await rates.refresh(live('busy', busy.address));
    now = 32_000;
    await rates.refresh(live('busy', busy.address));
    const figures = rates.figuresOf('busy')!;
    expect(figures.opsPerSecond).toEqual(NO_OPERATIONS);
    const askedBefore = asked.length;
    now = 34_000;
    await rates.refresh([{ storeId: 'busy', address: busy.address, live: false }]);
    expect(asked).toHaveLength(askedBefore);
    expect(rates.figuresOf('busy')).toEqual({ ...figures, opsPerSecond: undefined });
    now = 35_000;
    await rates.refresh(live('busy', busy.address));
    expect(rates.figuresOf('busy')?.opsPerSecond).toBeUndefined();
  });

  it('says why a store could not be asked, keeps its last figures without a rate, and starts a new history with its next answer', async () => {
    const rates = newRates();
    const nobody = `127.0.0.1:${await freePort()}`;
    now = 40_000;
    await rates.refresh(live('x', busy.address));
    const operations = rates.figuresOf('x')!.operations;
    now = 42_000;
    await rates.refresh(live('x', nobody));
    expect(rates.figuresOf('x')).toMatchObject({ operations, opsPerSecond: undefined, error: expect.stringMatching(/\S/) });
    now = 43_000;
    await rates.refresh(live('x', busy.address));
    expect(rates.figuresOf('x')).toEqual({ operations, entries: expect.any(Number), bytes: expect.any(Number) });
  });
});
