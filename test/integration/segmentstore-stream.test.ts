/**
 * `ExecuteStream` against a started `kvt segmentstore` process, spoken raw (the loader's client, no
 * kvt client code): answers under the message's id, a bad message kept to its id, a message whose
 * request does not decode answered under its id, one that does not decode at all ending the stream
 * after the messages before it are answered, and a stop that answers or refuses every message and ends the stream cleanly.
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import type { ExecuteResponse, ExecuteStreamResponse } from '../../proto/messages';
import { KvtProcess, startSegmentStore, tempDir } from '../harness/process';

type Duplex = grpc.ClientDuplexStream<unknown, ExecuteStreamResponse>;
type StoreClient = grpc.Client & Record<string, unknown>;
type Unary = (req: unknown, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

/** A stream and everything it brought back: answers by id, and how it ended. */
class RawStream {
  readonly answers = new Map<number, ExecuteStreamResponse>();
  readonly ended: Promise<grpc.StatusObject>;
  private waiters: (() => void)[] = [];

  private status: grpc.StatusObject | undefined;

  constructor(readonly call: Duplex) {
    call.on('data', (msg: ExecuteStreamResponse) => {
      this.answers.set(msg.id, msg);
      for (const w of this.waiters.splice(0)) w();
    });
    this.ended = new Promise((resolve) => call.on('status', resolve));
    void this.ended.then((status) => {
      this.status = status;
      for (const w of this.waiters.splice(0)) w();
    });
    call.on('error', () => undefined); // the status above says how it ended
  }

  send(id: number, request: unknown): void {
    this.call.write({ id, request });
  }

  sendIterate(id: number, iterate: unknown): void {
    this.call.write({ id, iterate });
  }

  /** The answer to message `id`; rejects when the stream ends without one. */
  async answer(id: number): Promise<ExecuteStreamResponse> {
    while (!this.answers.has(id)) {
      if (this.status) throw new Error(`the stream ended (${grpc.status[this.status.code]} ${this.status.details}) without answering message ${id}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
    return this.answers.get(id)!;
  }
}

function clientFor(address: string): StoreClient {
  const Client = kvtPackage().SegmentStore;
  return new Client(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as StoreClient;
}

/** A client whose stream sends raw bytes (messages made with {@link encoded}, or bytes that are none). */
function rawClientFor(address: string): StoreClient {
  const service = kvtPackage().SegmentStore.service;
  const Raw = grpc.makeGenericClientConstructor({ ExecuteStream: { ...service.ExecuteStream, requestSerialize: (b: Buffer) => b } }, 'SegmentStore');
  return new Raw(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as StoreClient;
}

/** The bytes of the ExecuteStreamRequest carrying `request` under `id`. */
function encoded(id: number, request: unknown): Buffer {
  return kvtPackage().SegmentStore.service.ExecuteStream.requestSerialize({ id, request });
}

/** Runs `body` against a started store holding segment 1, with a raw-bytes client and the loader's (closed after). */
async function withStore(body: (store: { raw: StoreClient; client: StoreClient; proc: KvtProcess }) => Promise<void>): Promise<void> {
  using dir = tempDir('kvt-stream-bad-');
  await using proc = await startSegmentStore(dir.path);
  const raw = rawClientFor(proc.address);
  const client = clientFor(proc.address);
  try {
    await unary(client, 'CreateSegment', { segmentId: '1' });
    await body({ raw, client, proc });
  } finally {
    raw.close();
    client.close();
  }
}

function unary(client: StoreClient, method: string, req: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => (client[method] as Unary).call(client, req, (err, res) => (err ? reject(err) : resolve(res))));
}

function open(client: StoreClient): RawStream {
  return new RawStream((client.ExecuteStream as () => Duplex).call(client));
}

const put = (segmentId: string, key: string, value: string) => ({
  requests: [{ update: { segmentId, modifications: [{ family: '', key: Buffer.from(key), value: Buffer.from(value) }] } }],
});
const get = (segmentId: string, ...keys: string[]) => ({ requests: [{ get: { segmentId, keys: keys.map((k) => ({ family: '', key: Buffer.from(k) })) } }] });

function values(res: ExecuteResponse | null): (string | null)[] {
  return res!.responses[0].get!.entries.map((e) => (e.found ? e.value.toString() : null));
}

describe('ExecuteStream over gRPC', () => {
  it('answers each message under its id, keeps a bad message to its id, and serves many messages at once', async () => {
    using dir = tempDir('kvt-stream-');
    await using proc = await startSegmentStore(dir.path);
    const client = clientFor(proc.address);
    try {
      await unary(client, 'CreateSegment', { segmentId: '1' });
      const s = open(client);
      s.send(7, put('1', 'a', 'one'));
      s.send(4000000000, put('1', 'b', 'two'));
      s.send(9, undefined); // no request
      s.send(11, put('2', 'c', 'x')); // no such segment: an error inside the response
      const first = Number((await s.answer(7)).response!.responses[0].update!.firstSequence);
      expect(first).toBeGreaterThan(0);
      expect((await s.answer(4000000000)).response!.responses[0].update!.firstSequence).toBe(String(first + 1));
      expect((await s.answer(9)).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'message 9 has no request' });
      expect((await s.answer(11)).response!.responses[0].error).toMatchObject({ code: 'SEGMENT_NOT_FOUND' });
      s.send(12, get('1', 'a', 'b', 'c'));
      expect(values((await s.answer(12)).response)).toEqual(['one', 'two', null]);

      // 300 messages written back to back (more than a stream runs at once): every one answered.
      for (let i = 0; i < 300; i++) s.send(1000 + i, put('1', `k${i}`, `v${i}`));
      for (let i = 0; i < 300; i++) expect((await s.answer(1000 + i)).response!.responses[0].update!.firstSequence).toMatch(/^[1-9][0-9]*$/);
      s.send(2000, get('1', 'k0', 'k150', 'k299'));
      expect(values((await s.answer(2000)).response)).toEqual(['v0', 'v150', 'v299']);

      // Iterator pages travel on streams too (a family-less page, then a keyed family's).
      s.sendIterate(2001, { segmentId: '1', family: '', includeValues: true, maxItems: 3, prefix: Buffer.from('k1') });
      s.send(2002, { requests: [{ update: { segmentId: '1', modifications: ['x', 'y', 'z'].map((k) => ({ family: 'fam', key: Buffer.from(k), value: Buffer.from(`${k}!`) })) } }] });
      await s.answer(2002);
      s.sendIterate(2003, { segmentId: '1', family: 'fam', includeValues: true, maxItems: 10, reverse: true });
      s.sendIterate(2004, { segmentId: '77', family: 'fam', maxItems: 10 });
      const page = (await s.answer(2001)).iterate!;
      expect(page.items.map((e) => e.key.toString())).toEqual(['k1', 'k10', 'k100']);
      expect(page.done).toBe(false);
      const fam = (await s.answer(2003)).iterate!;
      expect(fam.items.map((e) => `${e.key}=${e.value}`)).toEqual(['z=z!', 'y=y!', 'x=x!']);
      expect(fam.done).toBe(true);
      expect((await s.answer(2004)).error).toMatchObject({ code: 'SEGMENT_NOT_FOUND' });
      s.call.end();
      expect((await s.ended).code).toBe(grpc.status.OK);
    } finally {
      client.close();
    }
  });

  it('answers a message whose request does not decode under its id with INVALID_ARGUMENT, and keeps the stream', async () => {
    await withStore(async ({ raw, client }) => {
      const s = open(raw);
      s.call.write(encoded(1, put('1', 'a', 'before')));
      // Message 2: id 2, then a request announcing 127 bytes of sub-requests with 1 present.
      s.call.write(Buffer.from([0x08, 0x02, 0x12, 0x03, 0x0a, 0x7f, 0x00]));
      // Message 3: id 3, then an iterate announcing a 5-byte prefix with 0 present.
      s.call.write(Buffer.from([0x08, 0x03, 0x1a, 0x02, 0x2a, 0x05]));
      s.call.write(encoded(4, put('1', 'b', 'after')));
      expect((await s.answer(2)).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'message 2: request is not a valid kvt.v1.ExecuteRequest: truncated field' });
      expect((await s.answer(3)).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'message 3: iterate is not a valid kvt.v1.IterateRequest: index out of range: 2 + 5 > 2' });
      for (const id of [1, 4]) expect((await s.answer(id)).response!.responses[0].update!.firstSequence).toMatch(/^[1-9][0-9]*$/);
      s.call.end();
      expect((await s.ended).code).toBe(grpc.status.OK);
      expect(values((await unary(client, 'Execute', get('1', 'a', 'b'))) as ExecuteResponse)).toEqual(['before', 'after']);
    });
  });

  it('ends the stream with INVALID_ARGUMENT at a message that does not decode, after answering the messages before it, and keeps serving', async () => {
    await withStore(async ({ raw, client, proc }) => {
      const bad = open(raw);
      const N = 20;
      for (let i = 0; i < N; i++) bad.call.write(encoded(i + 1, put('1', `k${i}`, `v${i}`)));
      bad.call.write(Buffer.from([0x12, 0x7f, 0x0a])); // field 2, 127 bytes announced, 1 present: no id to answer under
      bad.call.write(encoded(N + 1, put('1', 'later', 'not run')));
      const status = await bad.ended;
      expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(status.details).toMatch(/^message is not a valid kvt\.v1\.ExecuteStreamRequest: /);
      // Every update sent before the bad message was answered, and is applied; the one after it was not run.
      for (let i = 0; i < N; i++) expect(bad.answers.get(i + 1)?.response?.responses[0].update?.firstSequence, `message ${i + 1}`).toMatch(/^[1-9][0-9]*$/);
      expect(bad.answers.has(N + 1)).toBe(false);
      const res = (await unary(client, 'Execute', get('1', ...Array.from({ length: N }, (_, i) => `k${i}`), 'later'))) as ExecuteResponse;
      expect(values(res)).toEqual([...Array.from({ length: N }, (_, i) => `v${i}`), null]);
      const good = open(client);
      good.send(1, put('1', 'a', 'still here'));
      expect((await good.answer(1)).response!.responses[0].update!.firstSequence).toMatch(/^[1-9][0-9]*$/);
      good.call.end();
      expect(proc.running).toBe(true);
    });
  });

  it('on SIGTERM answers or refuses every message, ends its streams with OK, and what it answered is durable', async () => {
    using dir = tempDir('kvt-stream-stop-');
    const proc = await startSegmentStore(dir.path);
    const client = clientFor(proc.address);
    const N = 200;
    let s: RawStream;
    try {
      await unary(client, 'CreateSegment', { segmentId: '1' });
      s = open(client);
      for (let i = 0; i < N; i++) s.send(i + 1, put('1', `k${i}`, `v${i}`));
      await s.answer(1);
      const exit = proc.stop();
      const status = await s.ended;
      // A forced shutdown (a stream left open past the grace) would end it CANCELLED / UNAVAILABLE.
      expect(status.code).toBe(grpc.status.OK);
      expect(await exit).toBe(0);
    } finally {
      client.close();
    }
    const answered: number[] = [];
    const notRun: number[] = [];
    for (let i = 0; i < N; i++) {
      const a = s.answers.get(i + 1);
      if (a?.response) answered.push(i);
      else {
        // Refused while stopping, or never answered because the stream ended first: not run either way.
        if (a) expect(a.error).toMatchObject({ code: 'UNAVAILABLE', message: 'segment store is stopping; the request was not run' });
        notRun.push(i);
      }
    }
    expect(answered.length).toBeGreaterThan(0);
    await using again = await startSegmentStore(dir.path);
    const after = clientFor(again.address);
    try {
      const res = (await unary(after, 'Execute', get('1', ...Array.from({ length: N }, (_, i) => `k${i}`)))) as ExecuteResponse;
      const found = values(res);
      for (const i of answered) expect(found[i]).toBe(`v${i}`);
      for (const i of notRun) expect(found[i]).toBeNull();
    } finally {
      after.close();
    }
  });
});
