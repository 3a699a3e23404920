/**
 * The archive conformance suite against KvtArchiveStore on a real cluster: a controller and two
 * segment stores, one table of byte keys and values per case; the crash case runs `kvt archive
 * append` in a child process and kills it, the restart case restarts both segment stores.
 */
import { KvtArchiveStore, Serializers } from '../../client';
import { blockKey } from '../../client/archive/kvt-archive-keys';
import { startClusterTables } from '../harness/cluster-tables';
import { archiveConformance } from '../suites/archive-conformance';
import { ArchiveTarget, damageBytes } from '../suites/archive-context';

const SCOPE = 'archive';
const BYTES = { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes };

async function clusterTarget(): Promise<ArchiveTarget> {
  const tables = await startClusterTables(SCOPE, 4, 'a', { stableStorePorts: true });
  const { cluster, factory } = tables;
  return {
    async space() {
      const name = await tables.newTable();
      const raw = factory.forKeyValueTable(name, BYTES);
      return {
        open: (options) => new KvtArchiveStore(factory.forKeyValueTable(name, BYTES), options),
        async damageBlock(title, block, damage) {
          const entry = await raw.get(title, blockKey(block, 0));
          if (!entry) throw new Error(`no block ${block} of ${title}`);
          await raw.put(title, blockKey(block, 0), damageBytes(entry.value, damage));
        },
        cliArgs: [`kvt:${SCOPE}/${name}`, '--controller', cluster.controllerAddress],
      };
    },
    async restartBackend() {
      for (let i = 0; i < cluster.stores.length; i++) {
        const port = cluster.stores[i].port;
        await cluster.stores[i].stop();
        await cluster.restartStore(i, port);
      }
    },
    dispose: () => tables.dispose(),
  };
}

archiveConformance('KvtArchiveStore on a cluster of two segment stores', clusterTarget, { processes: true, restart: true });
