/**
 * etcd through the `etcd3` npm client, the way a Node application would normally talk to etcd.
 */
import { Etcd3 } from 'etcd3';
import { etcdFamilyKey, prefixEnd } from './etcd-grpc-peer';
import { BatchEntry, Peer, VersionedValue } from './peer';

/** etcd via the etcd3 library (its builders for single keys, its KV client for the 100-put Txn). */
export class Etcd3Peer implements Peer {
  readonly name = 'etcd3' as const;
  readonly cpu;
  private readonly client: Etcd3;

  /** @param pid the etcd server's current pid (it changes when the bench restarts etcd) */
  constructor(endpoint: string, pid: () => number) {
    this.client = new Etcd3({ hosts: `http://${endpoint}` });
    this.cpu = { kind: 'pids', pids: () => [pid()] } as const;
  }

  async put(key: string, value: Buffer): Promise<void> {
    await this.client.put(key).value(value).exec();
  }

  async get(key: string): Promise<Buffer | null> {
    return this.client.get(key).buffer();
  }

  async getVersioned(key: string): Promise<VersionedValue> {
    const res = await this.client.get(key).exec();
    const kv = res.kvs[0];
    return kv ? { value: kv.value, version: kv.mod_revision } : { value: null, version: null };
  }

  async replaceIf(key: string, value: Buffer, version: string | null): Promise<boolean> {
    // Mod revision 0 matches only an absent key ("must not exist").
    const res = await this.client
      .if(key, 'Mod', '==', version ?? 0)
      .then(this.client.put(key).value(value))
      .commit();
    return res.succeeded;
  }

  async putBatch(family: string, entries: BatchEntry[]): Promise<void> {
    // The builders insist on a comparison; an unconditional Txn goes through the library's KV client.
    const success = entries.map((e) => ({ request_put: { key: Buffer.from(etcdFamilyKey(family, e.key)), value: e.value } }));
    await this.client.kv.txn({ compare: [], success, failure: [] });
  }

  async putInFamily(family: string, key: string, value: Buffer): Promise<void> {
    await this.client.put(etcdFamilyKey(family, key)).value(value).exec();
  }

  async getInFamily(family: string, key: string): Promise<Buffer | null> {
    return this.client.get(etcdFamilyKey(family, key)).buffer();
  }

  async putMany(entries: BatchEntry[]): Promise<void> {
    const success = entries.map((e) => ({ request_put: { key: Buffer.from(e.key), value: e.value } }));
    await this.client.kv.txn({ compare: [], success, failure: [] });
  }

  async scanFamily(family: string): Promise<number> {
    const key = Buffer.from(etcdFamilyKey(family, ''));
    const res = await this.client.kv.range({ key, range_end: prefixEnd(key) });
    return res.kvs.length;
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
