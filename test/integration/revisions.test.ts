/**
 * The page revision suite on a real cluster: a controller and two segment stores, each case on a
 * fresh table of 4 partitions. (test/unit/revisions/page-revision-store.test.ts runs the same suite
 * on the in-memory table.)
 */
import { Serializers } from '../../client';
import { startClusterTables } from '../harness/cluster-tables';
import { revisionsConformance } from '../suites/revisions-conformance';
import type { RevisionsTarget } from '../suites/revisions-context';

const SCOPE = 'revisions';

async function clusterTarget(): Promise<RevisionsTarget> {
  const tables = await startClusterTables(SCOPE, 4, 'pages');
  return {
    cluster: true,
    table: () => tables.create({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes }),
    dispose: () => tables.dispose(),
  };
}

revisionsConformance('gRPC table on a cluster of two segment stores', clusterTarget);
