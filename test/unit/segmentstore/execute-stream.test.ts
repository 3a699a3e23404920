/**
 * `ExecuteStream` flow control, on the store's own service served in-process over real gRPC with its
 * request decoder counting what the store reads off the wire: a client that keeps sending while its
 * requests are not answered, or while it reads no answers, makes the store read and hold a bounded
 * number of bytes, not one maximum-size message (or answer) per message in flight.
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../../proto/load';
import { MAX_KEY_LENGTH, MAX_VALUE_LENGTH } from '../../../proto/limits';
import type { ExecuteStreamResponse, GetResponse } from '../../../proto/messages';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../../../server-kit/grpc-server';
import { silentLogger } from '../../../server-kit/log';
import { ExecuteStreams, MAX_STREAM_ANSWER_BYTES, MAX_STREAM_IN_FLIGHT, MAX_STREAM_REQUEST_BYTES } from '../../../segmentstore/service/execute-stream';
import { executeStreams, segmentStoreDefinition, segmentStoreHandlers } from '../../../segmentstore/service/segment-store-service';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import { scratchEngines } from '../../harness/scratch-engines';
import { unreadExecuteStream } from '../../harness/unread-stream';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ExecuteStream flow control', () => {
  const scratch = scratchEngines('kvt-stream-flow-');

  /** The store's service on an engine in a temp dir, its ExecuteStream decoder counting what it reads. */
  async function storeCountingReads(): Promise<{ engine: SegmentEngine; address: string; read: { bytes: number; messages: number }; streams: ExecuteStreams }> {
    const engine = await scratch.open();
    const read = { bytes: 0, messages: 0 };
    const store = segmentStoreDefinition();
    const decode = store.ExecuteStream.requestDeserialize;
    const definition: grpc.ServiceDefinition = {
      ...store,
      ExecuteStream: {
        ...store.ExecuteStream,
        requestDeserialize: (bytes: Buffer) => {
          read.bytes += bytes.length;
          read.messages++;
          return decode(bytes);
        },
      },
    };
    const streams = executeStreams(engine, silentLogger);
    const server = newGrpcServer();
    server.addService(definition, segmentStoreHandlers(engine, silentLogger, streams));
    const port = await bindGrpcServer(server, '127.0.0.1', 0);
    scratch.defer(async () => {
      await streams.close();
      await shutdownGrpcServer(server, 1_000);
    });
    return { engine, address: `127.0.0.1:${port}`, read, streams };
  }

  /** Polls (bounded) until `counter.bytes` has not moved for half a second. */
  async function untilQuiet(counter: { bytes: number }): Promise<void> {
    for (let quiet = 0, last = -1, polls = 0; quiet < 5 && polls < 300; polls++) {
      await sleep(100);
      quiet = counter.bytes === last ? quiet + 1 : 0;
      last = counter.bytes;
    }
  }

  it('stops reading a stream once its unanswered requests pass the byte budget, and answers every one later', async () => {
    const { engine, address, read } = await storeCountingReads();
    await engine.createSegment('1');
    // Hold every Get until released (the real engine still does the work), so nothing is answered meanwhile.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held = 0;
    const get = engine.get.bind(engine);
    engine.get = async (req, budget) => {
      held++;
      await released;
      return get(req, budget);
    };
    // Messages of ~2.5 MB (320 keys of 8,000 bytes to read): 100 of them are far more than the budget,
    // and the 64 the count bound lets run at once would be twice it.
    const keys = Array.from({ length: 320 }, (_, i) => ({ family: '', key: Buffer.alloc(MAX_KEY_LENGTH - 190, i) }));
    const message = kvtPackage().SegmentStore.service.ExecuteStream.requestSerialize({ id: 1, request: { requests: [{ get: { segmentId: '1', keys } }] } });
    const N = 100;
    expect(MAX_STREAM_IN_FLIGHT * message.length).toBeGreaterThan(2 * MAX_STREAM_REQUEST_BYTES);
    expect(N * message.length).toBeGreaterThan(3 * MAX_STREAM_REQUEST_BYTES);

    const service = kvtPackage().SegmentStore.service;
    const Raw = grpc.makeGenericClientConstructor({ ExecuteStream: { ...service.ExecuteStream, requestSerialize: (b: Buffer) => b } }, 'SegmentStore');
    const client = new Raw(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as grpc.Client & { ExecuteStream(): grpc.ClientDuplexStream<Buffer, ExecuteStreamResponse> };
    scratch.defer(() => client.close());
    const call = client.ExecuteStream();
    const answers: ExecuteStreamResponse[] = [];
    call.on('data', (msg: ExecuteStreamResponse) => answers.push(msg));
    const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => undefined); // the status above says how it ended
    for (let i = 0; i < N; i++) call.write(message);
    call.end();
    try {
      // Wait until the store has stopped reading: nothing more read for half a second (bounded).
      await untilQuiet(read);
      // Read but not answered: at most the budget, plus the message that crossed it and one read ahead;
      // before, 64 running plus 16 read ahead (200 MB here, up to 5 GiB of maximum-size messages).
      expect(answers).toHaveLength(0);
      expect(held).toBeGreaterThan(0);
      expect(read.bytes, `${read.messages} messages read`).toBeLessThanOrEqual(MAX_STREAM_REQUEST_BYTES + 2 * message.length);
    } finally {
      release();
    }
    const status = await ended;
    expect(status.code).toBe(grpc.status.OK);
    expect(read.messages).toBe(N);
    expect(answers).toHaveLength(N);
    for (const a of answers) {
      // All at once they pass the stream's answer bytes (2.5 MB of keys each), so later answers may
      // stop short (the client asks again for the rest): a prefix of the keys, at least the first.
      const entries = (a.response!.responses[0].get as GetResponse).entries;
      expect(entries.length).toBeGreaterThanOrEqual(1);
      expect(entries.map((e) => e.found)).toEqual(keys.slice(0, entries.length).map(() => false));
      entries.forEach((e, i) => expect(Buffer.compare(e.key, keys[i].key)).toBe(0));
    }
  }, 60_000);

  it('holds at most the answer budget of Get answers for a stream whose client does not read, and completes them later', async () => {
    const { engine, address } = await storeCountingReads();
    await engine.createSegment('1');
    // Count the bytes of keys and values the Gets answer with (the real engine still does the work).
    const produced = { bytes: 0, answers: 0 };
    const engineGet = engine.get.bind(engine);
    engine.get = async (req, budget) => {
      const res = await engineGet(req, budget);
      produced.answers++;
      for (const e of res.entries) produced.bytes += e.key.length + e.value.length;
      return res;
    };
    // Eight values of the largest size: each message asks for all of them, an answer of ~8 MB.
    const keys = Array.from({ length: 8 }, (_, i) => Buffer.from(`big-${i}`));
    const values = keys.map((_, i) => Buffer.alloc(MAX_VALUE_LENGTH, i + 1));
    for (let i = 0; i < keys.length; i++) await engine.update({ segmentId: '1', modifications: [{ type: 'PUT', family: '', key: keys[i], value: values[i] }] });
    const N = 40;
    const answerBytes = keys.length * MAX_VALUE_LENGTH;
    // All 40 may run at once (the count bound is 64): 320 MB of answers, five times the budget.
    expect(N).toBeLessThan(MAX_STREAM_IN_FLIGHT);
    expect(N * answerBytes).toBeGreaterThan(4 * MAX_STREAM_ANSWER_BYTES);
    const get = { segmentId: '1', keys: keys.map((key) => ({ family: '', key })) };
    const call = unreadExecuteStream(
      address,
      Array.from({ length: N }, (_, i) => ({ id: i + 1, request: { requests: [{ get }] } })),
    );
    scratch.defer(() => call.close());
    await untilQuiet(produced);
    // Answered but not read (the client took at most its 64 KiB window), so held by the store: the
    // budget, plus the first entry of each answer past it (every answer takes one, so that it makes
    // progress); before, every answer in full (320 MB). The stream may also have stopped reading
    // before the last messages.
    const slack = N * (MAX_VALUE_LENGTH + 1024);
    expect(produced.bytes, `${produced.answers} answers`).toBeLessThanOrEqual(MAX_STREAM_ANSWER_BYTES + slack);
    expect(produced.bytes).toBeGreaterThan(MAX_STREAM_ANSWER_BYTES / 2);
    const { answers, status } = await call.readAll();
    expect(status).toBe(grpc.status.OK);
    expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    let complete = 0;
    for (const a of answers) {
      const entries = (a.response!.responses[0].get as GetResponse).entries;
      // A prefix of the keys asked for, at least the first, with their values.
      expect(entries.length, `answer ${a.id}`).toBeGreaterThanOrEqual(1);
      entries.forEach((e, i) => {
        expect(Buffer.compare(e.key, keys[i])).toBe(0);
        expect(Buffer.compare(e.value, values[i])).toBe(0);
      });
      if (entries.length === keys.length) complete++;
    }
    // The budget still answered several in full.
    expect(complete).toBeGreaterThanOrEqual(Math.floor(MAX_STREAM_ANSWER_BYTES / answerBytes) - 1);
  }, 60_000);

  it('refuses a message that arrives while the store stops, without running it, and ends the stream once the running one is answered', async () => {
    const { engine, address, streams } = await storeCountingReads();
    await engine.createSegment('1');
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const ran: string[] = [];
    const get = engine.get.bind(engine);
    engine.get = async (req, budget) => {
      ran.push((req.keys ?? []).map((k) => Buffer.from(k.key ?? []).toString()).join());
      await released;
      return get(req, budget);
    };
    const client = new (kvtPackage().SegmentStore)(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as grpc.Client & {
      ExecuteStream(): grpc.ClientDuplexStream<unknown, ExecuteStreamResponse>;
    };
    scratch.defer(() => client.close());
    const call = client.ExecuteStream();
    const answers = new Map<number, ExecuteStreamResponse>();
    let answered = () => undefined as void;
    call.on('data', (msg: ExecuteStreamResponse) => {
      answers.set(msg.id, msg);
      answered();
    });
    const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => undefined); // the status above says how it ended
    const getOf = (key: string) => ({ requests: [{ get: { segmentId: '1', keys: [{ family: '', key: Buffer.from(key) }] } }] });
    const answerOf = async (id: number): Promise<ExecuteStreamResponse | undefined> => {
      for (let polls = 0; polls < 100 && !answers.has(id); polls++) await Promise.race([new Promise<void>((r) => (answered = r)), sleep(50)]);
      return answers.get(id);
    };
    try {
      call.write({ id: 1, request: getOf('running') });
      for (let polls = 0; polls < 100 && ran.length === 0; polls++) await sleep(20);
      expect(ran).toEqual(['running']);
      const closed = streams.close();
      call.write({ id: 2, request: getOf('late') });
      // Refused at once, while message 1 still runs: a stopping store takes no new work.
      expect((await answerOf(2))?.error).toMatchObject({ code: 'UNAVAILABLE', message: 'segment store is stopping; the request was not run' });
      expect(answers.has(1)).toBe(false);
      release();
      expect((await answerOf(1))?.response?.responses[0].get?.entries).toHaveLength(1);
      await closed;
      expect((await ended).code).toBe(grpc.status.OK);
      expect(ran).toEqual(['running']);
    } finally {
      release();
    }
  }, 60_000);
});
