/**
 * The page revision suite on a real cluster: a controller and two segment stores, each case on a
 * fresh table of 4 partitions. (test/unit/revisions/page-revision-store.test.ts runs the same suite
 * on the in-memory table.)
 */
import { KeyValueTableFactory, KeyValueTableManager, Serializers } from '../../client';
import { TestCluster } from '../harness/process';
import { revisionsConformance } from '../suites/revisions-conformance';
import type { RevisionsTarget } from '../suites/revisions-context';

const SCOPE = 'revisions';

async function clusterTarget(): Promise<RevisionsTarget> {
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
    cluster: true,
    async table() {
      const name = `pages${++tables}`;
      await manager.createKeyValueTable(SCOPE, name, { partitionCount: 4 });
      return factory.forKeyValueTable(name, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes });
    },
    dispose,
  };
}

revisionsConformance('gRPC table on a cluster of two segment stores', clusterTarget);
