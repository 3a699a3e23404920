/**
 * Reads of large values against a real cluster. The answers to coalesced Gets are bounded by the
 * store (32 MiB of keys and values per answer, see GetResponse) and the client asks again for the
 * keys left out, so that no answer passes gRPC's 64 MiB message limit: 70 concurrent gets of 1 MiB
 * values used to be merged into one ~73 MB answer that broke the stream and failed every call on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTable, KeyValueTableFactory, KeyValueTableManager, MAX_VALUE_LENGTH, Serializers } from '../../client';
import { TestCluster } from '../harness/process';

describe('large values', () => {
  let cluster: TestCluster;
  let manager: KeyValueTableManager;
  let factory: KeyValueTableFactory;
  let table: KeyValueTable<string, Uint8Array>;
  const keys = Array.from({ length: 70 }, (_, i) => `g${String(i).padStart(2, '0')}`);
  const valueOf = (i: number) => new Uint8Array(MAX_VALUE_LENGTH).fill(i);

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 1 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('lv');
    await manager.createKeyValueTable('lv', 'big', { partitionCount: 1 });
    factory = KeyValueTableFactory.withScope('lv', { controller: cluster.controllerAddress });
    table = factory.forKeyValueTable('big', { keySerializer: Serializers.utf8, valueSerializer: Serializers.bytes });
    for (let i = 0; i < keys.length; i += 10)
      await table.putAll(
        'big',
        keys.slice(i, i + 10).map((k, j) => [k, valueOf(i + j)] as const),
      );
  }, 120_000);
  afterAll(async () => {
    await factory?.close();
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  const firstBytes = (entries: ({ value: Uint8Array } | null)[]) => entries.map((e) => (e ? [e.value.length, e.value[0]] : null));
  const expected = keys.map((_, i) => [MAX_VALUE_LENGTH, i]);

  it('answers 70 concurrent gets of 1 MiB values, each with its own value', async () => {
    expect(firstBytes(await Promise.all(keys.map((k) => table.get('big', k))))).toEqual(expected);
  });

  it('answers a getAll of 70 keys of 1 MiB values, in input order, alongside an insert', async () => {
    const [entries, version] = await Promise.all([table.getAll('big', [...keys].reverse()), table.putIfAbsent('other', 'new', new Uint8Array([1]))]);
    expect(firstBytes(entries)).toEqual([...expected].reverse());
    expect(version.toString()).toMatch(/^\d+\.\d+$/);
    expect((await table.get('other', 'new'))?.value).toEqual(new Uint8Array([1]));
  });
});
