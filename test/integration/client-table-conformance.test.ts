/**
 * The client conformance suite against the gRPC table: a real controller and two real segment
 * stores, each case on fresh tables of 8 partitions. (test/unit/client/in-memory-key-value-table.test.ts
 * runs the same suite against the in-memory table.)
 */
import { startClusterTables } from '../harness/cluster-tables';
import { tableConformance } from '../suites/table-conformance';
import type { TableTarget } from '../suites/table-conformance-context';

const SCOPE = 'conformance';
const PARTITIONS = 8;

async function clusterTarget(): Promise<TableTarget> {
  const tables = await startClusterTables(SCOPE, PARTITIONS, 't');
  return {
    partitionCount: PARTITIONS,
    table: (config) => tables.create(config),
    // The stores expire entries by their own clock, the machine's: wait for it.
    advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    dispose: () => tables.dispose(),
  };
}

tableConformance('gRPC table on a cluster of two segment stores', clusterTarget);
