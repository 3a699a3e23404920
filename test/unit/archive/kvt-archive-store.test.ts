/**
 * The archive conformance suite against KvtArchiveStore on the in-memory table. (The same suite runs
 * on a real cluster and against CassandraArchiveStore on a real Cassandra: test/integration/archive-*.test.ts.)
 */
import { InMemoryKeyValueTable, KvtArchiveStore, Serializers } from '../../../client';
import { blockKey } from '../../../client/archive/kvt-archive-keys';
import { archiveConformance } from '../../suites/archive-conformance';
import { ArchiveSpace, damageBytes } from '../../suites/archive-context';

let spaces = 0;

function memorySpace(): ArchiveSpace {
  const table = new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 4, name: `memory/archive-${++spaces}` });
  return {
    open: (options) => new KvtArchiveStore(table, options),
    async damageBlock(title, block, damage) {
      const entry = await table.get(title, blockKey(block, 0));
      if (!entry) throw new Error(`no block ${block} of ${title}`);
      await table.put(title, blockKey(block, 0), damageBytes(entry.value, damage));
    },
  };
}

archiveConformance('KvtArchiveStore on the in-memory table', async () => ({ space: async () => memorySpace(), dispose: async () => undefined }), { processes: false, restart: false });
