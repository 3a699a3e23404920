/**
 * The revisions benchmark's peer: a page history stored in etcd the plain way, one key per render
 * `title/rev/tid` (rev zero-padded so key order is rev order), the latest read with a prefix range
 * sorted descending, limit 1 — the last key of the page.
 */
import * as grpc from '@grpc/grpc-js';
import { call, KeyValueMsg, KvClient, loadKvService, prefixEnd } from '../peers/etcd-grpc-peer';

const DESCEND = 2;

/** What one etcd transaction may carry: --max-txn-ops (128) and --max-request-bytes (1.5 MiB) less room for framing. */
export const ETCD_TXN_OPS = 128;
export const ETCD_TXN_BYTES = 1_400_000;
const SORT_BY_KEY = 0;

/** The etcd key of a render. */
export function etcdRenderKey(title: string, rev: number, tid: string): Buffer {
  return Buffer.from(`${title}/${String(rev).padStart(16, '0')}/${tid}`);
}

/** A render as etcd keeps it: the headers as a JSON line, then the body. */
export function etcdRenderValue(value: string, headers: Record<string, string>): Buffer {
  return Buffer.from(`${JSON.stringify(headers)}\n${value}`);
}

/** Page renders on etcd over a plain grpc-js channel. */
export class EtcdPages {
  private readonly client: KvClient;

  /** @param prefix put before every key (a namespace of its own) */
  constructor(
    endpoint: string,
    private readonly prefix = '',
  ) {
    const KV = loadKvService();
    this.client = new KV(endpoint, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': 64 * 1024 * 1024 }) as unknown as KvClient;
  }

  async put(title: string, rev: number, tid: string, value: string, headers: Record<string, string>): Promise<void> {
    await call(this.client.put, this.client, { key: this.key(title, rev, tid), value: etcdRenderValue(value, headers) });
  }

  /** Renders of one page in one transaction (at most ETCD_TXN_OPS puts, ETCD_TXN_BYTES of keys and values: etcd's defaults less room). */
  async putMany(renders: { title: string; rev: number; tid: string; value: string; headers: Record<string, string> }[]): Promise<void> {
    const success = renders.map((r) => ({ requestPut: { key: this.key(r.title, r.rev, r.tid), value: etcdRenderValue(r.value, r.headers) } }));
    await call(this.client.txn, this.client, { compare: [], success, failure: [] });
  }

  /** The last key of the page: its latest render, or null. */
  async latest(title: string): Promise<KeyValueMsg | null> {
    const key = Buffer.from(`${this.prefix}${title}/`);
    const res = await call<object, { kvs: KeyValueMsg[] }>(this.client.range, this.client, { key, rangeEnd: prefixEnd(key), limit: 1, sortOrder: DESCEND, sortTarget: SORT_BY_KEY });
    return res.kvs[0] ?? null;
  }

  private key(title: string, rev: number, tid: string): Buffer {
    return this.prefix === '' ? etcdRenderKey(title, rev, tid) : Buffer.concat([Buffer.from(this.prefix), etcdRenderKey(title, rev, tid)]);
  }

  close(): void {
    this.client.close();
  }
}
