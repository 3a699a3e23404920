/**
 * etcd through plain @grpc/grpc-js with our own minimal rpc.proto (bench/peers/etcd/rpc.proto):
 * the cheapest client path to etcd, to tell etcd's own speed from the etcd3 library's overhead.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as path from 'node:path';
import { BatchEntry, Peer, VersionedValue, repoRoot } from './peer';

export interface KeyValueMsg {
  key: Buffer;
  value: Buffer;
  modRevision: number;
}
interface RangeResponseMsg {
  kvs: KeyValueMsg[];
  count: number;
}
interface TxnResponseMsg {
  succeeded: boolean;
}
type Unary<Req, Res> = (req: Req, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Res) => void) => void;
export interface KvClient extends grpc.Client {
  range: Unary<object, RangeResponseMsg>;
  put: Unary<object, object>;
  txn: Unary<object, TxnResponseMsg>;
}

const DEADLINE_MS = 30_000;
const COMPARE_EQUAL = 0;
const TARGET_MOD = 2;

let kvConstructor: grpc.ServiceClientConstructor | undefined;

export function loadKvService(): grpc.ServiceClientConstructor {
  if (kvConstructor) return kvConstructor;
  const file = path.join(repoRoot(), 'bench', 'peers', 'etcd', 'rpc.proto');
  const def = protoLoader.loadSync(file, { keepCase: false, longs: Number, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: { KV: grpc.ServiceClientConstructor } };
  kvConstructor = pkg.etcdserverpb.KV;
  return kvConstructor;
}

export function call<Req, Res>(fn: Unary<Req, Res>, client: KvClient, req: Req): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn.call(client, req, { deadline: Date.now() + DEADLINE_MS }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** The key of an entry of a family, and the [start, end) of the family's range. */
export function etcdFamilyKey(family: string, key: string): string {
  return `f/${family}/${key}`;
}

/** The exclusive end of a prefix range: the prefix with its last byte incremented. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // all 0xff: etcd reads "\0" as "to the end of the key space"
}

/** etcd over a raw grpc-js channel. */
export class EtcdGrpcPeer implements Peer {
  readonly name = 'etcd-grpc' as const;
  readonly cpu;
  private readonly client: KvClient;

  /** @param pid the etcd server's current pid (it changes when the bench restarts etcd) */
  constructor(endpoint: string, pid: () => number) {
    const KV = loadKvService();
    this.client = new KV(endpoint, grpc.credentials.createInsecure()) as unknown as KvClient;
    this.cpu = { kind: 'pids', pids: () => [pid()] } as const;
  }

  async put(key: string, value: Buffer): Promise<void> {
    await call(this.client.put, this.client, { key: Buffer.from(key), value });
  }

  async get(key: string): Promise<Buffer | null> {
    return (await this.getVersioned(key)).value;
  }

  async getVersioned(key: string): Promise<VersionedValue> {
    const res = await call(this.client.range, this.client, { key: Buffer.from(key) });
    const kv = res.kvs[0];
    return kv ? { value: kv.value, version: String(kv.modRevision) } : { value: null, version: null };
  }

  async replaceIf(key: string, value: Buffer, version: string | null): Promise<boolean> {
    const k = Buffer.from(key);
    // mod_revision 0 compares equal only for an absent key, which is "must not exist".
    const compare = [{ result: COMPARE_EQUAL, target: TARGET_MOD, key: k, modRevision: version === null ? 0 : Number(version) }];
    const res = await call(this.client.txn, this.client, { compare, success: [{ requestPut: { key: k, value } }], failure: [] });
    return res.succeeded;
  }

  async putBatch(family: string, entries: BatchEntry[]): Promise<void> {
    const success = entries.map((e) => ({ requestPut: { key: Buffer.from(etcdFamilyKey(family, e.key)), value: e.value } }));
    await call(this.client.txn, this.client, { compare: [], success, failure: [] });
  }

  async putInFamily(family: string, key: string, value: Buffer): Promise<void> {
    await call(this.client.put, this.client, { key: Buffer.from(etcdFamilyKey(family, key)), value });
  }

  async getInFamily(family: string, key: string): Promise<Buffer | null> {
    const res = await call(this.client.range, this.client, { key: Buffer.from(etcdFamilyKey(family, key)) });
    return res.kvs[0]?.value ?? null;
  }

  async putMany(entries: BatchEntry[]): Promise<void> {
    const success = entries.map((e) => ({ requestPut: { key: Buffer.from(e.key), value: e.value } }));
    await call(this.client.txn, this.client, { compare: [], success, failure: [] });
  }

  async scanFamily(family: string): Promise<number> {
    const key = Buffer.from(etcdFamilyKey(family, ''));
    const res = await call(this.client.range, this.client, { key, rangeEnd: prefixEnd(key) });
    return res.kvs.length;
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
