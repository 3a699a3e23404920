/**
 * The client conformance suite against the gRPC table: a real controller and two real segment
 * stores, each case on fresh tables of 8 partitions. (test/unit/client/in-memory-key-value-table.test.ts
 * runs the same suite against the in-memory table.)
 */
import { KeyValueTableFactory, KeyValueTableManager } from '../../client';
import { TestCluster } from '../harness/process';
import { tableConformance } from '../suites/table-conformance';
import type { TableTarget } from '../suites/table-conformance-context';

const SCOPE = 'conformance';
const PARTITIONS = 8;

async function clusterTarget(): Promise<TableTarget> {
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
    async table(config) {
      const name = `t${++tables}`;
      await manager.createKeyValueTable(SCOPE, name, { partitionCount: PARTITIONS });
      return factory.forKeyValueTable(name, config);
    },
    // The stores expire entries by their own clock, the machine's: wait for it.
    advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    dispose,
  };
}

tableConformance('gRPC table on a cluster of two segment stores', clusterTarget);
