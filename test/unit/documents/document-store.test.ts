/**
 * The document store suite on the in-memory table (test/integration/documents.test.ts runs the same
 * suite on a real cluster), and what only the in-memory table shows: the options' checks.
 */
import { describe, expect, it } from 'vitest';
import { DocumentStore, InMemoryKeyValueTable, Serializers } from '../../../client';
import { documentsConformance } from '../../suites/documents-conformance';
import type { DocumentsTarget } from '../../suites/documents-context';

const PARTITIONS = 4;

const bytesTable = (partitionCount = PARTITIONS) => new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount });

async function memoryTarget(): Promise<DocumentsTarget> {
  return {
    partitionCount: PARTITIONS,
    // The in-memory table exposes its partition count: the store takes it from there.
    storeOptions: {},
    table: async () => bytesTable(),
    dispose: async () => undefined,
  };
}

documentsConformance('in-memory table', memoryTarget);

describe('DocumentStore options', () => {
  it('defaults revsLimit to 1000 and takes 1 to 4000; anything else is an InvalidArgumentError', () => {
    const table = bytesTable();
    expect(new DocumentStore(table).revsLimit).toBe(1000);
    expect(new DocumentStore(table, { revsLimit: 1 }).revsLimit).toBe(1);
    expect(new DocumentStore(table, { revsLimit: 4000 }).revsLimit).toBe(4000);
    for (const [given, shown] of [
      [0, '0'],
      [4001, '4001'],
      [1.5, '1.5'],
      ['10', '"10"'],
    ] as const) {
      expect(() => new DocumentStore(table, { revsLimit: given as number })).toThrow(`revsLimit is ${shown}; it must be an integer from 1 to 4000`);
    }
  });

  it('takes the partition count from the table, or from the options, and refuses a mismatch', () => {
    const table = bytesTable(3);
    expect(() => new DocumentStore(table, { partitionCount: 3 })).not.toThrow();
    expect(() => new DocumentStore(table, { partitionCount: 4 })).toThrow('partitionCount is 4 but the table has 3 partitions');
    const hidden = new Proxy(table, { get: (t, p) => (p === 'partitionCount' ? undefined : Reflect.get(t, p)) });
    expect(() => new DocumentStore(hidden)).toThrow('partitionCount is required: this table does not expose its partition count (manager.getKeyValueTableConfiguration tells it)');
    expect(() => new DocumentStore(hidden, { partitionCount: 0 })).toThrow('partitionCount is 0; it must be an integer from 1 to 1024');
    expect(() => new DocumentStore(table, { markerLeaseMs: 0 })).toThrow('markerLeaseMs is 0; it must be an integer from 1 to 2147483647');
    expect(() => new DocumentStore(table, { clock: 5 as never })).toThrow('clock must be a function returning milliseconds, got number');
    expect(() => new DocumentStore(null as never)).toThrow('DocumentStore needs a KeyValueTable of bytes keys and values');
  });

  const writes: [string, (store: DocumentStore, i: number) => Promise<unknown>][] = [
    ['an edit', (store, i) => store.put(`doc-${i}`, { i })],
    ['a replicated document', (store, i) => store.bulkDocs([{ _id: `doc-${i}`, _rev: '1-a', i }], { newEdits: false })],
  ];
  it.each(writes)('refuses, naming partitionCount, %s whose document and feed family land in different segments', async (_, write) => {
    const table = bytesTable(4);
    const hidden = new Proxy(table, { get: (t, p) => (p === 'partitionCount' ? undefined : Reflect.get(t, p)) });
    const wrong = new DocumentStore(hidden, { partitionCount: 2 });
    const errors: string[] = [];
    for (let i = 0; i < 20; i++) await write(wrong, i).catch((e: Error) => errors.push(e.message));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatch(/^partitionCount 2 does not match the table: document "doc-\d+" is in segment \d+, the feed family computed for it in segment \d+$/);
  });
});
