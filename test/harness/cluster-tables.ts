/**
 * Fresh tables on a real cluster for the suites that run the same cases on the in-memory table and on
 * gRPC (table conformance, documents, revisions, the kvt archive): a controller and two segment
 * stores, a scope of the suite's own, and a new table of `partitionCount` partitions each time one is
 * asked for.
 */
import { KeyValueTableFactory, KeyValueTableManager, type KeyValueTable, type KeyValueTableConfig } from '../../client';
import { TestCluster } from './process';

export interface ClusterTables {
  readonly cluster: TestCluster;
  /** The factory of the scope (for more handles on a table). */
  readonly factory: KeyValueTableFactory;
  /** Creates a new table of the scope, named after the prefix and a counter; resolves its name. */
  newTable(): Promise<string>;
  /** A new table, and a handle on it. */
  create<K, V>(config: KeyValueTableConfig<K, V>): Promise<KeyValueTable<K, V>>;
  /** Closes the clients and stops the cluster. */
  dispose(): Promise<void>;
}

/** Starts the cluster and makes the scope (stopping the cluster again if that fails). */
export async function startClusterTables(scope: string, partitionCount: number, tablePrefix: string, options: { stableStorePorts?: boolean } = {}): Promise<ClusterTables> {
  const cluster = await TestCluster.start({ stores: 2, ...options });
  const manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
  const factory = KeyValueTableFactory.withScope(scope, { controller: cluster.controllerAddress });
  const dispose = async (): Promise<void> => {
    await factory.close();
    await manager.close();
    await cluster[Symbol.asyncDispose]();
  };
  try {
    await manager.createScope(scope);
  } catch (err) {
    await dispose();
    throw err;
  }
  let tables = 0;
  const newTable = async (): Promise<string> => {
    const name = `${tablePrefix}${++tables}`;
    await manager.createKeyValueTable(scope, name, { partitionCount });
    return name;
  };
  return {
    cluster,
    factory,
    newTable,
    create: async <K, V>(config: KeyValueTableConfig<K, V>) => factory.forKeyValueTable(await newTable(), config),
    dispose,
  };
}
