/**
 * Reads do not wait for updates' durable writes: the client coalesces a store's reads (gets, small
 * iterator pages) and its updates in separate calls, so a read is never answered together with an
 * update that waits for its group commit's disk sync, nor queued behind update calls that fill the
 * calls a store may have in flight. A real controller and a real store process whose durable log
 * stalls (test/harness/leveldb-fault-preload.cjs) make the wait as long as a test needs.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTable, KeyValueTableFactory, KeyValueTableManager, Serializers } from '../../client';
import { DiskStall } from '../harness/disk-stall';
import { KvtProcess, startController, startSegmentStore, tempDir } from '../harness/process';

/** Whether `p` settles within `ms`: 'settled', or 'pending'. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<'settled' | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([p.then(() => 'settled' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('reads beside updates that wait for their durable write (the store disk stalled)', () => {
  let dir: ReturnType<typeof tempDir>;
  let controller: KvtProcess;
  let store: KvtProcess;
  let disk: DiskStall;
  let factory: KeyValueTableFactory;
  let table: KeyValueTable<string, string>;

  beforeAll(async () => {
    dir = tempDir('kvt-read-lane-');
    disk = new DiskStall(path.join(dir.path, 'hold'));
    controller = await startController(path.join(dir.path, 'controller'));
    store = await startSegmentStore(path.join(dir.path, 'store'), controller.address, [], disk.env());
    await store.waitForLog('registered with controller');
    await using manager = new KeyValueTableManager({ controller: controller.address });
    await manager.createScope('rl');
    await manager.createKeyValueTable('rl', 't', { partitionCount: 1 });
    factory = KeyValueTableFactory.withScope('rl', { controller: controller.address });
    table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    await table.putAll('read', [
      ['a', 'va'],
      ['b', 'vb'],
    ]);
  });
  afterAll(async () => {
    disk?.release();
    await factory?.close();
    await store?.stop();
    await controller?.stop();
    dir?.[Symbol.dispose]();
  });

  it('answers a get started in the same turn as an update while the update waits for the disk', async () => {
    let read: ReturnType<typeof table.get> | undefined;
    const { running: update } = await disk.stallWith(() => {
      const u = table.put('write-1', 'k', 'v1');
      read = table.get('read', 'a');
      return u;
    });
    try {
      expect(await settlesWithin(read!, 10_000)).toBe('settled');
      expect((await read!)?.value).toBe('va');
      expect(await settlesWithin(update, 200)).toBe('pending');
    } finally {
      disk.release();
    }
    expect((await update).segmentId).toBeTruthy();
    expect((await table.get('write-1', 'k'))?.value).toBe('v1');
  });

  it('answers gets and iterator pages while update calls fill what the store may have in flight', async () => {
    // Updates in three turns: at least two calls in flight (the client's default), all waiting for the disk.
    const updates = [(await disk.stallWith(() => table.put('write-2', 'k0', 'v'))).running];
    for (let i = 1; i < 3; i++) {
      await new Promise((r) => setImmediate(r));
      const update = table.put('write-2', `k${i}`, 'v');
      update.catch(() => undefined); // awaited below, unless the test fails first
      updates.push(update);
    }
    try {
      const reads = Promise.all([
        table.getAll('read', ['a', 'b']),
        (async () => {
          for await (const page of table.entryIterator('read', { maxKeysAtOnce: 1 })) return page.items.map((e) => e.key);
          return [];
        })(),
      ]);
      expect(await settlesWithin(reads, 10_000)).toBe('settled');
      const [got, firstPage] = await reads;
      expect(got.map((e) => e?.value)).toEqual(['va', 'vb']);
      expect(firstPage).toEqual(['a']);
      expect(await settlesWithin(Promise.all(updates), 200)).toBe('pending');
    } finally {
      disk.release();
    }
    await Promise.all(updates);
    expect((await table.getAll('write-2', ['k0', 'k1', 'k2'])).map((e) => e?.value)).toEqual(['v', 'v', 'v']);
  });
});
