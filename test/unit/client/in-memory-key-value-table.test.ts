/**
 * The in-memory table: the client conformance suite (as the gRPC table runs it on a real cluster),
 * then what only the in-memory table has (its options, its clock).
 */
import { describe, expect, it } from 'vitest';
import { InMemoryKeyValueTable, InvalidArgumentError, partitionOf, Serializers } from '../../../client';
import { tableConformance } from '../../suites/table-conformance';
import { TableTarget, thrown, utf8 } from '../../suites/table-conformance-context';

/** In-memory tables of 8 partitions sharing one fake clock. */
function memoryTarget(): TableTarget {
  let now = Date.UTC(2024, 0, 1);
  let tables = 0;
  return {
    partitionCount: 8,
    table: async (config) => new InMemoryKeyValueTable({ ...config, partitionCount: 8, clock: () => now, name: `memory/t${++tables}` }),
    advance: async (ms) => {
      now += ms;
    },
    dispose: async () => undefined,
  };
}

tableConformance('in-memory table', async () => memoryTarget());

describe('InMemoryKeyValueTable', () => {
  it('has 4 partitions and the name memory/table unless told otherwise', async () => {
    const table = new InMemoryKeyValueTable(utf8);
    expect([table.partitionCount, table.name]).toEqual([4, 'memory/table']);
    const segments = new Set<string>();
    for (let i = 0; i < 64; i++) segments.add((await table.put(`f${i}`, 'k', 'v')).segmentId);
    expect(segments.size).toBe(4);
  });

  it('puts a family-less key in the partition partitionOf names', async () => {
    const table = new InMemoryKeyValueTable({ ...utf8, partitionCount: 16 });
    const bySegment = new Map<string, Set<number>>();
    for (let i = 0; i < 100; i++) {
      const v = await table.put(null, `key-${i}`, 'v');
      bySegment.set(v.segmentId, (bySegment.get(v.segmentId) ?? new Set()).add(partitionOf(16, null, Buffer.from(`key-${i}`))));
    }
    expect([...bySegment.values()].every((partitions) => partitions.size === 1)).toBe(true);
  });

  it('refuses a missing serializer, a bad partition count, clock or name with InvalidArgumentError', () => {
    const cases: [() => unknown, string][] = [
      [() => new InMemoryKeyValueTable({ keySerializer: Serializers.utf8 } as never), 'InMemoryKeyValueTable needs keySerializer and valueSerializer'],
      [() => new InMemoryKeyValueTable({ ...utf8, partitionCount: 0 }), 'partitionCount is 0; the minimum is 1'],
      [() => new InMemoryKeyValueTable({ ...utf8, partitionCount: 1025 }), 'partitionCount is 1025; the maximum is 1024'],
      [() => new InMemoryKeyValueTable({ ...utf8, clock: 5 as never }), 'clock must be a function returning milliseconds, got number'],
      [() => new InMemoryKeyValueTable({ ...utf8, name: '' }), 'name must be a non-empty string'],
    ];
    for (const [make, message] of cases) {
      const err = thrown(make);
      expect([err.constructor, err.message]).toEqual([InvalidArgumentError, message]);
    }
  });

  it('expires an entry exactly when its clock reaches the expiry time', async () => {
    let now = 1000;
    const table = new InMemoryKeyValueTable({ ...utf8, clock: () => now });
    await table.put('f', 'k', 'v', { ttlMs: 50 });
    now = 1049;
    expect(await table.exists('f', 'k')).toBe(true);
    now = 1050;
    expect(await table.exists('f', 'k')).toBe(false);
  });

  it('holds time still while its clock reads earlier than a time it gave, as the segment store does', async () => {
    let now = 10_000;
    const table = new InMemoryKeyValueTable({ ...utf8, clock: () => now });
    await table.put('f', 'k', 'v', { ttlMs: 100 });
    now = 5_000;
    // Written at the held time 10,000, not at 5,000: it expires at 10,100.
    await table.put('f', 'held', 'v', { ttlMs: 100 });
    now = 10_099;
    expect([await table.exists('f', 'k'), await table.exists('f', 'held')]).toEqual([true, true]);
    now = 10_100;
    expect([await table.exists('f', 'k'), await table.exists('f', 'held')]).toEqual([false, false]);
  });

  it("keeps its own copy of keys and values: changing the caller's bytes or a value read changes nothing", async () => {
    const table = new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytesView });
    const key = new Uint8Array([1, 2]);
    const value = new Uint8Array([3, 4]);
    await table.put('f', key, value);
    key[0] = 9;
    value[0] = 9;
    const read = await table.get('f', new Uint8Array([1, 2]));
    expect([...read!.value]).toEqual([3, 4]);
    read!.value[1] = 9;
    expect([...(await table.get('f', new Uint8Array([1, 2])))!.value]).toEqual([3, 4]);
  });

  it('shares nothing between two tables', async () => {
    const a = new InMemoryKeyValueTable(utf8);
    const b = new InMemoryKeyValueTable(utf8);
    await a.put('f', 'k', 'v');
    expect(await b.get('f', 'k')).toBeNull();
  });
});
