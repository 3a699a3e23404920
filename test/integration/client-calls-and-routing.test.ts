/**
 * Valid calls never break a store's stream, and a long-lived handle answers right after its table was
 * deleted and created again with another partition count (issue 39), against a real controller and
 * two real segment stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, KeyValueTableFactory, KeyValueTableManager, Serializers, TableNotFoundError, UnavailableError } from '../../client';
import { MAX_KEY_FAMILY_LENGTH } from '../../client/limits';
import { Coalescer, defaultCoalescerOptions, MAX_EXECUTE_BYTES } from '../../client/internal/coalescer';
import type { Connections } from '../../client/internal/connections';
import { TestCluster } from '../harness/process';

const utf8 = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };

/** A family name of exactly `MAX_KEY_FAMILY_LENGTH` bytes, distinct per `n`. */
function longFamily(n: number): string {
  const tag = `f${n}-`;
  return tag + 'x'.repeat(MAX_KEY_FAMILY_LENGTH - tag.length);
}

describe('KeyValueTable calls near the message limit', () => {
  let cluster: TestCluster;
  let manager: KeyValueTableManager;
  let factory: KeyValueTableFactory;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('big');
    await manager.createKeyValueTable('big', 'families', { partitionCount: 4 });
    await manager.createKeyValueTable('big', 'one', { partitionCount: 1 });
    factory = KeyValueTableFactory.withScope('big', { controller: cluster.controllerAddress });
  });
  afterAll(async () => {
    await factory?.close();
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  it('takes 300 concurrent batches of 256 keys in 2,048-byte families of one store, none over a message', async () => {
    const table = factory.forKeyValueTable('one', utf8);
    // Each batch is within every limit; coalesced by key and value bytes alone (1-3 bytes each),
    // they made Execute messages over 64 MiB (the family travels with every modification).
    const outcomes = await Promise.allSettled(
      Array.from({ length: 300 }, (_, n) =>
        table.putAll(
          longFamily(n),
          Array.from({ length: 256 }, (_, i) => [String(i), ''] as [string, string]),
        ),
      ),
    );
    const failed = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
    expect(failed).toEqual([]);
    for (const n of [0, 150, 299]) {
      const page = (await table.keyIterator(longFamily(n), { maxKeysAtOnce: 1000 })[Symbol.asyncIterator]().next()).value;
      expect(page?.items).toHaveLength(256);
    }
  });

  it('reads 70,000 keys of a 2,048-byte family in one getAll while another caller writes', async () => {
    const table = factory.forKeyValueTable('families', utf8);
    const family = longFamily(1000);
    const present = Array.from({ length: 200 }, (_, i) => `k${i * 350}`);
    for (let i = 0; i < present.length; i += 100)
      await table.putAll(
        family,
        present.slice(i, i + 100).map((k) => [k, `v-${k}`] as [string, string]),
      );
    const keys = Array.from({ length: 70_000 }, (_, i) => `k${i}`);
    const [entries, version] = await Promise.all([table.getAll(family, keys), table.put(null, 'beside', 'b')]);
    expect(entries).toHaveLength(70_000);
    const found = entries.flatMap((e, i) => (e ? [[keys[i], e.value]] : []));
    expect(found).toEqual(present.map((k) => [k, `v-${k}`]));
    expect((await table.get(null, 'beside'))?.version.equals(version)).toBe(true);
  });

  it('refuses a request over the message limit by itself, before sending it, as an invalid argument', async () => {
    const coalescer = new Coalescer({} as Connections, defaultCoalescerOptions());
    const keys = Array.from({ length: 9_000 }, (_, i) => ({ family: longFamily(i), key: Buffer.alloc(6_000) }));
    const err = await coalescer.submit('127.0.0.1:1', { get: { segmentId: '1', keys } }, Date.now() + 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(new RegExp(`^request is \\d+ bytes encoded; the maximum is ${MAX_EXECUTE_BYTES}$`));
    expect(coalescer.stats.calls).toBe(0);
    coalescer.close();
  });
});

describe('KeyValueTable handles of a table deleted and created again', () => {
  let cluster: TestCluster;
  let manager: KeyValueTableManager;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('again');
  });
  afterAll(async () => {
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  it('finds every key with getAll and scanEntries after the table came back with more partitions', async () => {
    await manager.createKeyValueTable('again', 't', { partitionCount: 1 });
    await using factory = KeyValueTableFactory.withScope('again', { controller: cluster.controllerAddress });
    const table = factory.forKeyValueTable('t', utf8);
    const keys = Array.from({ length: 16 }, (_, i) => `key-${i}`);
    for (const k of keys) await table.put(null, k, 'old');
    expect((await table.getAll(null, keys)).every((e) => e?.value === 'old')).toBe(true);

    await manager.deleteKeyValueTable('again', 't');
    await manager.createKeyValueTable('again', 't', { partitionCount: 4 });
    // A fresh client writes the new table; the old handle still has the routing of one partition.
    await using writer = KeyValueTableFactory.withScope('again', { controller: cluster.controllerAddress });
    const fresh = writer.forKeyValueTable('t', utf8);
    for (const k of keys) await fresh.put(null, k, 'new');

    const entries = await table.getAll(null, keys);
    expect(entries.map((e) => e?.value ?? null)).toEqual(keys.map(() => 'new'));
    const scanned: string[] = [];
    for await (const page of table.scanEntries()) for (const e of page.items) scanned.push(`${e.key}=${e.value}`);
    expect(scanned.sort()).toEqual(keys.map((k) => `${k}=new`).sort());
  });

  it('fails a scan whose table is deleted and created again under it with TableNotFoundError, never mixing the two', async () => {
    await manager.createKeyValueTable('again', 's', { partitionCount: 2 });
    await using factory = KeyValueTableFactory.withScope('again', { controller: cluster.controllerAddress });
    const table = factory.forKeyValueTable('s', utf8);
    for (let i = 0; i < 40; i++) await table.put(null, `key-${i}`, 'old');
    const pages = table.scanEntries({ maxKeysAtOnce: 5 })[Symbol.asyncIterator]();
    expect((await pages.next()).value?.items).toHaveLength(5);
    await manager.deleteKeyValueTable('again', 's');
    await manager.createKeyValueTable('again', 's', { partitionCount: 3 });
    let err: unknown;
    try {
      for (let r = await pages.next(); !r.done; r = await pages.next()) expect(r.value.items.every((e) => e.value === 'old')).toBe(true);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TableNotFoundError);
    expect((err as Error).message).toContain('table again/s changed during the scan');
    expect(err).not.toBeInstanceOf(UnavailableError);
  });
});
