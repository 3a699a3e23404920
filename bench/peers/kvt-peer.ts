/**
 * kvt through its public client (`client/index.ts`, loaded from dist/ at run time), against a
 * cluster of real processes. The client is loaded dynamically and typed by the few shapes used
 * here (DESIGN §7), so the benchmark still builds and runs its etcd and LevelDB columns while the
 * client is unfinished; the kvt column then reads as missing with the load error.
 */
import * as path from 'node:path';
import { KvtCluster } from './kvt-cluster';
import { BatchEntry, Peer, VersionedValue, repoRoot } from './peer';

interface KvtVersion {
  toString(): string;
}
interface KvtEntry {
  value: Uint8Array;
  version: KvtVersion;
}
interface KvtTable {
  put(family: string | null, key: string, value: Uint8Array): Promise<KvtVersion>;
  putIfAbsent(family: string | null, key: string, value: Uint8Array): Promise<KvtVersion>;
  replace(family: string | null, key: string, value: Uint8Array, version: KvtVersion): Promise<KvtVersion>;
  putAll(family: string, entries: Iterable<readonly [string, Uint8Array]>): Promise<KvtVersion[]>;
  get(family: string | null, key: string): Promise<KvtEntry | null>;
  entryIterator(family: string, opts: { maxKeysAtOnce?: number }): AsyncIterable<{ items: unknown[] }>;
  close(): Promise<void>;
}
interface KvtClientModule {
  KeyValueTableManager: new (opts: { controller: string }) => {
    createScope(scope: string): Promise<boolean>;
    createKeyValueTable(scope: string, name: string, cfg: { partitionCount: number }): Promise<boolean>;
    close(): Promise<void>;
  };
  KeyValueTableFactory: {
    withScope(
      scope: string,
      opts: { controller: string },
    ): {
      forKeyValueTable(name: string, opts: { keySerializer: unknown; valueSerializer: unknown }): KvtTable;
      close(): Promise<void>;
    };
  };
  Serializers: { utf8: unknown; bytesView: unknown };
  Version: { fromString(s: string): KvtVersion };
  ConditionalTableUpdateError: new (...args: never[]) => Error;
}

/** Loads the compiled client (of the checkout at `root`), or throws saying why it is not usable yet. */
export function loadKvtClient(root = repoRoot()): KvtClientModule {
  const file = path.join(root, 'dist', 'client', 'index.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deliberate late binding (see file comment)
  const mod = require(file) as Partial<KvtClientModule>;
  for (const name of ['KeyValueTableManager', 'KeyValueTableFactory', 'Serializers', 'Version', 'ConditionalTableUpdateError'] as const) {
    if (!mod[name]) throw new Error(`dist/client/index.js does not export ${name}`);
  }
  return mod as KvtClientModule;
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Options for {@link KvtPeer.open}. */
export interface KvtPeerOptions {
  /** @default 8 */
  partitionCount?: number;
  /** The kvt checkout whose client to load (see KvtClusterOptions.root). @default this one */
  root?: string;
}

/** kvt via KeyValueTableFactory → KeyValueTable<string, Uint8Array>. */
export class KvtPeer implements Peer {
  readonly name = 'kvt' as const;
  readonly cpu;

  private constructor(
    private readonly lib: KvtClientModule,
    private readonly table: KvtTable,
    private readonly closeAll: () => Promise<void>,
    cluster: KvtCluster,
  ) {
    this.cpu = { kind: 'pids', pids: () => cluster.pids } as const;
  }

  /** Creates scope `bench` and a fresh table on `cluster`, and opens it. */
  static async open(cluster: KvtCluster, options: KvtPeerOptions = {}): Promise<KvtPeer> {
    const lib = loadKvtClient(options.root);
    const manager = new lib.KeyValueTableManager({ controller: cluster.controller });
    const name = `bench-${Date.now()}`;
    try {
      await manager.createScope('bench');
      await manager.createKeyValueTable('bench', name, { partitionCount: options.partitionCount ?? 8 });
    } finally {
      await manager.close();
    }
    const factory = lib.KeyValueTableFactory.withScope('bench', { controller: cluster.controller });
    const table = factory.forKeyValueTable(name, { keySerializer: lib.Serializers.utf8, valueSerializer: lib.Serializers.bytesView });
    const closeAll = async (): Promise<void> => {
      await table.close();
      await factory.close();
    };
    return new KvtPeer(lib, table, closeAll, cluster);
  }

  async put(key: string, value: Buffer): Promise<void> {
    await this.table.put(null, key, value);
  }

  async get(key: string): Promise<Buffer | null> {
    const e = await this.table.get(null, key);
    return e ? toBuffer(e.value) : null;
  }

  async getVersioned(key: string): Promise<VersionedValue> {
    const e = await this.table.get(null, key);
    return e ? { value: toBuffer(e.value), version: e.version.toString() } : { value: null, version: null };
  }

  async replaceIf(key: string, value: Buffer, version: string | null): Promise<boolean> {
    try {
      if (version === null) await this.table.putIfAbsent(null, key, value);
      else await this.table.replace(null, key, value, this.lib.Version.fromString(version));
      return true;
    } catch (err) {
      if (err instanceof this.lib.ConditionalTableUpdateError) return false;
      throw err;
    }
  }

  async putBatch(family: string, entries: BatchEntry[]): Promise<void> {
    await this.table.putAll(
      family,
      entries.map((e) => [e.key, e.value] as const),
    );
  }

  async putInFamily(family: string, key: string, value: Buffer): Promise<void> {
    await this.table.put(family, key, value);
  }

  async getInFamily(family: string, key: string): Promise<Buffer | null> {
    const e = await this.table.get(family, key);
    return e ? toBuffer(e.value) : null;
  }

  async scanFamily(family: string): Promise<number> {
    let n = 0;
    for await (const page of this.table.entryIterator(family, { maxKeysAtOnce: 1000 })) n += page.items.length;
    return n;
  }

  async close(): Promise<void> {
    await this.closeAll();
  }
}
