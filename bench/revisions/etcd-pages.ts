/**
 * The revisions benchmark's peer: a page history stored in etcd the plain way, one key per render
 * `title/rev/tid` (rev zero-padded so key order is rev order), the latest read with a prefix range
 * sorted descending, limit 1 — the last key of the page.
 */
import * as grpc from '@grpc/grpc-js';
import { call, KeyValueMsg, KvClient, loadKvService, prefixEnd } from '../peers/etcd-grpc-peer';

const DESCEND = 2;
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

  constructor(endpoint: string) {
    const KV = loadKvService();
    this.client = new KV(endpoint, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': 64 * 1024 * 1024 }) as unknown as KvClient;
  }

  async put(title: string, rev: number, tid: string, value: string, headers: Record<string, string>): Promise<void> {
    await call(this.client.put, this.client, { key: etcdRenderKey(title, rev, tid), value: etcdRenderValue(value, headers) });
  }

  /** The last key of the page: its latest render, or null. */
  async latest(title: string): Promise<KeyValueMsg | null> {
    const key = Buffer.from(`${title}/`);
    const res = await call<object, { kvs: KeyValueMsg[] }>(this.client.range, this.client, { key, rangeEnd: prefixEnd(key), limit: 1, sortOrder: DESCEND, sortTarget: SORT_BY_KEY });
    return res.kvs[0] ?? null;
  }

  close(): void {
    this.client.close();
  }
}
