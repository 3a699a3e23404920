/**
 * Fail-stop storage, on real processes. A LevelDB write is made to fail by a preloaded script (as a
 * full disk would). A segment store then stops for good: the updates of that write fail, later ones
 * are refused UNAVAILABLE, the process exits 1 with one line on stderr, and a restart on the same
 * data directory serves every acknowledged update with its version while versions keep increasing.
 * The controller does the same with its metadata.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KvtProcess, REPO_ROOT, startController, startSegmentStore, tempDir } from '../harness/process';
import { controllerClient, failureOf } from './controller-helpers';
import { grpcAdapter, StoreFailure } from '../suites/segment-store-adapter';

const WRITERS = 16;
const PRELOAD = path.join(REPO_ROOT, 'test', 'harness', 'leveldb-fault-preload.cjs');

/** The process exits 1 by itself, with one line on stderr and the failure in its log. */
async function expectFailStop(proc: KvtProcess, command: string, logMsg: string): Promise<void> {
  expect(await proc.waitForExit()).toBe(1);
  expect(proc.stderr.join('')).toBe(`kvt ${command}: injected write failure; stopping (restart to recover)\n`);
  expect(proc.logs.some((r) => r.msg === logMsg)).toBe(true);
}

describe('a segment store whose storage write fails', () => {
  it('exits 1 after refusing further calls, and a restart keeps every acknowledged update', async () => {
    using dir = tempDir('kvt-storage-failure-');
    const trigger = path.join(dir.path, 'fail-next-write');
    const dataDir = path.join(dir.path, 'store');
    const store = await startSegmentStore(dataDir, undefined, [], { NODE_OPTIONS: `--require ${PRELOAD}`, KVT_TEST_FAULT_FILE: trigger });
    const acked = new Map<string, string>(); // key -> sequence
    const failures: StoreFailure[] = [];
    const client = grpcAdapter(store.address);
    try {
      await client.createSegment('1');
      let armed = false;
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; i < 500; i++) {
            const key = `w${w}-${String(i).padStart(4, '0')}`;
            if (w === 0 && i === 20 && !armed) {
              armed = true;
              fs.writeFileSync(trigger, '');
            }
            try {
              const res = await client.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from(key), value: Buffer.from(`v-${key}`) }] });
              acked.set(key, res.sequences[0]);
            } catch (err) {
              failures.push(err as StoreFailure);
              return; // this writer is done: the store failed
            }
          }
        }),
      );
    } finally {
      client.close();
    }
    expect(fs.existsSync(trigger)).toBe(false); // the injected failure happened
    expect(acked.size).toBeGreaterThan(WRITERS);
    expect(failures.length).toBe(WRITERS);
    // The updates of the failed write get its cause; later ones are refused (or find the store gone).
    expect(failures.some((f) => /injected write failure/.test(f.message))).toBe(true);
    for (const f of failures) expect(f.message).toMatch(/injected write failure|UNAVAILABLE|No connection|ECONNREFUSED|Connection dropped/);
    await expectFailStop(store, 'segmentstore', 'storage write failed: refusing every call; restart the segment store to recover');

    await using restarted = await startSegmentStore(dataDir);
    const again = grpcAdapter(restarted.address);
    try {
      const keys = [...acked.keys()];
      const got = await again.get({ segmentId: '1', keys: keys.map((k) => ({ family: 'f', key: Buffer.from(k) })) });
      got.entries.forEach((e, i) => {
        expect(e.found, keys[i]).toBe(true);
        expect(e.sequence, keys[i]).toBe(acked.get(keys[i]));
        expect(Buffer.from(e.value).toString()).toBe(`v-${keys[i]}`);
      });
      const highest = keys.reduce((m, k) => (BigInt(acked.get(k)!) > m ? BigInt(acked.get(k)!) : m), 0n);
      const next = await again.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from('after'), value: Buffer.from('v') }] });
      expect(BigInt(next.sequences[0])).toBeGreaterThan(highest);
    } finally {
      again.close();
    }
  });
});

describe('a controller whose metadata write fails', () => {
  it('exits 1 with one line, and a restart keeps every change acknowledged before', async () => {
    using dir = tempDir('kvt-storage-failure-');
    const trigger = path.join(dir.path, 'fail-next-write');
    const dataDir = path.join(dir.path, 'controller');
    const controller = await startController(dataDir, [], { NODE_OPTIONS: `--require ${PRELOAD}`, KVT_TEST_FAULT_FILE: trigger });
    const client = controllerClient(controller.address);
    try {
      expect(await client.call('CreateScope', { scope: 'kept' })).toEqual({ created: true });
      fs.writeFileSync(trigger, '');
      expect((await failureOf(client.call('CreateScope', { scope: 'lost' }))).message).toContain('injected write failure');
    } finally {
      client.close();
    }
    expect(fs.existsSync(trigger)).toBe(false);
    await expectFailStop(controller, 'controller', 'metadata write failed: refusing every change; restart the controller to recover');

    await using restarted = await startController(dataDir);
    const again = controllerClient(restarted.address);
    try {
      expect(await again.call('ListScopes', {})).toMatchObject({ scopes: ['kept'] });
      expect(await again.call('CreateScope', { scope: 'later' })).toEqual({ created: true });
    } finally {
      again.close();
    }
  });
});
