/**
 * The document store suite on a real cluster: a controller and two segment stores, each case on a
 * fresh table of 4 partitions. (test/unit/documents/document-store.test.ts runs the same suite on the
 * in-memory table.)
 */
import { KeyValueTableFactory, KeyValueTableManager, Serializers } from '../../client';
import { TestCluster } from '../harness/process';
import { documentsConformance } from '../suites/documents-conformance';
import type { DocumentsTarget } from '../suites/documents-context';

const SCOPE = 'documents';
const PARTITIONS = 4;

async function clusterTarget(): Promise<DocumentsTarget> {
  const cluster = await TestCluster.start({ stores: 2 });
  const manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
  const factory = KeyValueTableFactory.withScope(SCOPE, { controller: cluster.controllerAddress });
  const dispose = async () => {
    await factory.close();
    await manager.close();
    await cluster[Symbol.asyncDispose]();
  };
  try {
    await manager.createScope(SCOPE);
  } catch (err) {
    await dispose();
    throw err;
  }
  let tables = 0;
  return {
    partitionCount: PARTITIONS,
    // The gRPC table does not expose its partition count: the store is told it.
    storeOptions: { partitionCount: PARTITIONS },
    async table() {
      const name = `docs${++tables}`;
      await manager.createKeyValueTable(SCOPE, name, { partitionCount: PARTITIONS });
      return factory.forKeyValueTable(name, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes });
    },
    dispose,
  };
}

documentsConformance('gRPC table on a cluster of two segment stores', clusterTarget);
