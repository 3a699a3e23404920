/**
 * The document store suite on a real cluster: a controller and two segment stores, each case on a
 * fresh table of 4 partitions. (test/unit/documents/document-store.test.ts runs the same suite on the
 * in-memory table.)
 */
import { Serializers } from '../../client';
import { startClusterTables } from '../harness/cluster-tables';
import { documentsConformance } from '../suites/documents-conformance';
import type { DocumentsTarget } from '../suites/documents-context';

const SCOPE = 'documents';
const PARTITIONS = 4;

async function clusterTarget(): Promise<DocumentsTarget> {
  const tables = await startClusterTables(SCOPE, PARTITIONS, 'docs');
  return {
    partitionCount: PARTITIONS,
    // The gRPC table does not expose its partition count: the store is told it.
    storeOptions: { partitionCount: PARTITIONS },
    table: () => tables.create({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes }),
    dispose: () => tables.dispose(),
  };
}

documentsConformance('gRPC table on a cluster of two segment stores', clusterTarget);
