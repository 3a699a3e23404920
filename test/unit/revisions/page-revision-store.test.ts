/**
 * The page revision suite on the in-memory table (test/integration/revisions.test.ts runs it on a
 * real cluster).
 */
import { InMemoryKeyValueTable, Serializers } from '../../../client';
import { revisionsConformance } from '../../suites/revisions-conformance';
import type { BytesTable, RevisionsTarget } from '../../suites/revisions-context';

async function memoryTarget(): Promise<RevisionsTarget> {
  const tables: BytesTable[] = [];
  let count = 0;
  return {
    cluster: false,
    async table() {
      const table = new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 4, name: `memory/pages-${++count}` });
      tables.push(table);
      return table;
    },
    async dispose() {
      await Promise.all(tables.map((t) => t.close()));
    },
  };
}

revisionsConformance('in-memory table', memoryTarget);
