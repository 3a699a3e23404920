/**
 * Control-plane conformance through KeyValueTableManager against a real controller and two real
 * segment stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, KeyValueTableFactory, KeyValueTableManager, ObjectClosedError, partitionOf, ScopeNotFoundError, Serializers, TableNotFoundError } from '../../client';
import { TestCluster } from '../harness/process';

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('KeyValueTableManager', () => {
  let cluster: TestCluster;
  let manager: KeyValueTableManager;

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
  });
  afterAll(async () => {
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  it('creates a scope once and lists it', async () => {
    expect(await manager.createScope('cp')).toBe(true);
    expect(await manager.createScope('cp')).toBe(false);
    expect(await collect(manager.listScopes())).toContain('cp');
  });

  it('rejects partitionCount 0 and 1025 and the name "123%$" with InvalidArgumentError', async () => {
    for (const [name, count] of [
      ['t', 0],
      ['t', 1025],
      ['123%$', 1],
    ] as const) {
      const err = await rejection(manager.createKeyValueTable('cp', name, { partitionCount: count }));
      expect(err).toBeInstanceOf(InvalidArgumentError);
    }
    expect(((await rejection(manager.createKeyValueTable('cp', 't', { partitionCount: 1025 }))) as Error).message).toBe('partitionCount is 1025; the maximum is 1024');
  });

  it('creates a table (true), then reports it exists (false)', async () => {
    expect(await manager.createKeyValueTable('cp', 'orders', { partitionCount: 4 })).toBe(true);
    expect(await manager.createKeyValueTable('cp', 'orders', { partitionCount: 4 })).toBe(false);
    expect(await manager.createKeyValueTable('cp', 'orders', { partitionCount: 8 })).toBe(false);
    expect(await manager.getKeyValueTableConfiguration('cp', 'orders')).toEqual({ partitionCount: 4 });
  });

  it('rejects creating a table in a missing scope with ScopeNotFoundError', async () => {
    const err = await rejection(manager.createKeyValueTable('no-such-scope', 't', { partitionCount: 1 }));
    expect(err).toBeInstanceOf(ScopeNotFoundError);
    expect((err as ScopeNotFoundError).code).toBe('SCOPE_NOT_FOUND');
  });

  it('reports a missing table with TableNotFoundError', async () => {
    expect(await rejection(manager.getKeyValueTableConfiguration('cp', 'missing'))).toBeInstanceOf(TableNotFoundError);
  });

  it('rejects an update that changes partitionCount and accepts one that keeps it', async () => {
    await manager.createKeyValueTable('cp', 'fixed', { partitionCount: 2 });
    expect(await rejection(manager.updateKeyValueTable('cp', 'fixed', { partitionCount: 3 }))).toBeInstanceOf(InvalidArgumentError);
    expect(await manager.updateKeyValueTable('cp', 'fixed', { partitionCount: 2 })).toEqual({ partitionCount: 2 });
  });

  it('deletes a table (true, then false) and re-creates it with empty partitions', async () => {
    await manager.createKeyValueTable('cp', 'gone', { partitionCount: 3 });
    const factory = KeyValueTableFactory.withScope('cp', { controller: cluster.controllerAddress });
    try {
      const table = factory.forKeyValueTable('gone', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      await table.putAll('fam', [
        ['a', '1'],
        ['b', '2'],
      ]);
      await table.put(null, 'solo', 'x');
      expect(await manager.deleteKeyValueTable('cp', 'gone')).toBe(true);
      expect(await manager.deleteKeyValueTable('cp', 'gone')).toBe(false);
      expect(await rejection(table.get(null, 'solo'))).toBeInstanceOf(TableNotFoundError);
      expect(await manager.createKeyValueTable('cp', 'gone', { partitionCount: 3 })).toBe(true);
      const fresh = factory.forKeyValueTable('gone', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      expect(await fresh.getAll('fam', ['a', 'b'])).toEqual([null, null]);
      expect(await fresh.get(null, 'solo')).toBeNull();
      expect(await collect(fresh.keyIterator('fam'))).toEqual([]);
    } finally {
      await factory.close();
    }
  });

  it('lists an empty scope as empty', async () => {
    await manager.createScope('empty-scope');
    expect(await collect(manager.listKeyValueTables('empty-scope'))).toEqual([]);
  });

  it('lists exactly 4 tables after creating 4 tables twice, also with a small page size', async () => {
    await manager.createScope('four');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) await manager.createKeyValueTable('four', `t${i}`, { partitionCount: 1 });
    }
    const names = (await collect(manager.listKeyValueTables('four'))).map((t) => t.name).sort();
    expect(names).toEqual(['t0', 't1', 't2', 't3']);
    const paged = await collect(manager.listKeyValueTables('four', { pageSize: 1 }));
    expect(paged.map((t) => `${t.scope}/${t.name}`).sort()).toEqual(['four/t0', 'four/t1', 'four/t2', 'four/t3']);
  });

  it('refuses to delete a scope holding tables, then deletes it once empty', async () => {
    await manager.createScope('busy');
    await manager.createKeyValueTable('busy', 't', { partitionCount: 1 });
    expect(await rejection(manager.deleteScope('busy'))).toBeInstanceOf(InvalidArgumentError);
    expect(await manager.deleteKeyValueTable('busy', 't')).toBe(true);
    expect(await manager.deleteScope('busy')).toBe(true);
    expect(await manager.deleteScope('busy')).toBe(false);
  });

  it('describes a table: state, creation time, and each partition with its hash range, segment and live store; contents on request', async () => {
    const before = Date.now();
    await manager.createScope('desc');
    await manager.createKeyValueTable('desc', 't', { partitionCount: 4 });
    const stores = new Map((await manager.listSegmentStores()).map((s) => [s.id, s.address]));
    const plain = await manager.describeKeyValueTable('desc', 't');
    expect(plain).toMatchObject({ scope: 'desc', name: 't', state: 'ACTIVE', partitionCount: 4 });
    expect(plain.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(plain.createdAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(plain.partitions.map((p) => [p.partition, p.hashLow, p.hashHigh])).toEqual([
      [0, 0, 0.25],
      [1, 0.25, 0.5],
      [2, 0.5, 0.75],
      [3, 0.75, 1],
    ]);
    expect(new Set(plain.partitions.map((p) => p.segment)).size).toBe(4);
    for (const p of plain.partitions) {
      expect(p.store).toEqual({ id: expect.any(String), address: stores.get(p.store.id), live: true });
      expect(p).not.toHaveProperty('contents');
    }
    expect(new Set(plain.partitions.map((p) => p.store.id)).size).toBe(2);

    // Three keys in one family, two family-less keys: each partition counts what partitionOf sends it.
    const factory = KeyValueTableFactory.withScope('desc', { controller: cluster.controllerAddress });
    const expected = [0, 0, 0, 0];
    const bytes = [0, 0, 0, 0];
    try {
      const table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
      await table.putAll('page', [
        ['a', '1'],
        ['b', '22'],
        ['c', '333'],
      ]);
      expected[partitionOf(4, 'page')] += 3;
      bytes[partitionOf(4, 'page')] += 3 + 6;
      for (const key of ['solo', 'other']) {
        await table.put(null, key, 'vv');
        expected[partitionOf(4, null, Buffer.from(key))] += 1;
        bytes[partitionOf(4, null, Buffer.from(key))] += key.length + 2;
      }
    } finally {
      await factory.close();
    }
    const counted = await manager.describeKeyValueTable('desc', 't', { contents: true });
    expect(counted.partitions.map((p) => p.contents)).toEqual(expected.map((entries, i) => ({ entries, bytes: bytes[i] })));
    expect(counted.partitions.map((p) => p.segment)).toEqual(plain.partitions.map((p) => p.segment));

    expect(await rejection(manager.describeKeyValueTable('desc', 'missing'))).toBeInstanceOf(TableNotFoundError);
    expect(await rejection(manager.describeKeyValueTable('nope', 't'))).toBeInstanceOf(ScopeNotFoundError);
    expect(await rejection(manager.describeKeyValueTable('desc', 'bad name'))).toBeInstanceOf(InvalidArgumentError);
    expect(await rejection(manager.describeKeyValueTable('desc', 't', { contents: 'yes' as unknown as boolean }))).toBeInstanceOf(InvalidArgumentError);
  });

  it('routes with partitionOf as the client does, and refuses what it cannot route', () => {
    expect(partitionOf(1, 'anything')).toBe(0);
    expect(partitionOf(1024, 'page')).toBe(partitionOf(1024, 'page', Buffer.from('ignored with a family')));
    expect(() => partitionOf(0, 'f')).toThrow('partitionCount is 0; the minimum is 1');
    expect(() => partitionOf(1025, 'f')).toThrow('partitionCount is 1025; the maximum is 1024');
    expect(() => partitionOf(4, null)).toThrow(InvalidArgumentError);
    expect(partitionOf(4, undefined as unknown as null, Buffer.from('k'))).toBe(partitionOf(4, null, Buffer.from('k')));
    expect(() => partitionOf(4, null, new Uint8Array(0))).toThrow('key is empty');
    expect(() => partitionOf(4, 'x'.repeat(2049))).toThrow('key family is 2049 bytes; the maximum is 2048');
  });

  it('lists both segment stores as live', async () => {
    const stores = await manager.listSegmentStores();
    expect(stores).toHaveLength(2);
    expect(stores.every((s) => s.live)).toBe(true);
    expect(stores.map((s) => s.address).sort()).toEqual(cluster.stores.map((s) => s.address).sort());
  });

  it('fails with ObjectClosedError after close, and close twice is fine', async () => {
    const m = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await m.close();
    await m.close();
    expect(await rejection(m.createScope('x'))).toBeInstanceOf(ObjectClosedError);
  });
});
