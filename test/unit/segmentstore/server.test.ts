import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { jsonLogger, silentLogger } from '../../../server-kit/log';
import { SegmentStoreServer } from '../../../segmentstore/server';
import { ITERATE_ANSWER_RESERVE, MAX_STREAM_ANSWER_BYTES, MAX_STREAM_IN_FLIGHT } from '../../../segmentstore/service/execute-stream';
import { failNextLogWrite } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';
import { unreadExecuteStream } from '../../harness/unread-stream';
import { grpcAdapter } from '../../suites/segment-store-adapter';

describe('SegmentStoreServer', () => {
  it('starts in-process on an ephemeral port, serves gRPC, and stops idempotently', async () => {
    using dir = tempDir('kvt-ss-server-');
    const server = await SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger });
    expect(server.state).toBe('running');
    expect(server.port).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(dir.path, 'STORE_ID'), 'utf8').trim()).toBe(server.storeId);
    const client = grpcAdapter(`127.0.0.1:${server.port}`);
    try {
      expect(await client.createSegment('3')).toBe(true);
      await client.update({ segmentId: '3', modifications: [{ key: Buffer.from('k'), value: Buffer.from('v') }] });
      expect((await server.engine.segmentInfo('3')).entryCount).toBe('1');
    } finally {
      client.close();
    }
    await Promise.all([server.stop(), server.stop()]);
    expect(server.state).toBe('stopped');
    await server[Symbol.asyncDispose]();
  });

  it('keeps its store id across restarts and names a data directory in use', async () => {
    using dir = tempDir('kvt-ss-server-');
    await using first = await SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger });
    await expect(SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger })).rejects.toThrow(`data directory ${dir.path} is in use by another segment store`);
    const id = first.storeId;
    await first.stop();
    await using second = await SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger });
    expect(second.storeId).toBe(id);
  });

  it('reports a failed storage write as fatal and refuses later calls with UNAVAILABLE until it stops', async () => {
    using dir = tempDir('kvt-ss-server-');
    const server = await SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger });
    const client = grpcAdapter(`127.0.0.1:${server.port}`);
    try {
      await client.createSegment('3');
      await client.update({ segmentId: '3', modifications: [{ key: Buffer.from('k'), value: Buffer.from('v') }] });
      const fault = failNextLogWrite('injected write failure');
      try {
        await expect(client.update({ segmentId: '3', modifications: [{ key: Buffer.from('k2'), value: Buffer.from('v') }] })).rejects.toThrow(/injected write failure/);
      } finally {
        fault();
      }
      // What `kvt segmentstore` waits on to log one line and exit 1 (a supervisor restarts it).
      await expect(server.fatal).resolves.toMatchObject({ message: 'injected write failure' });
      await expect(client.update({ segmentId: '3', modifications: [{ key: Buffer.from('k3'), value: Buffer.from('v') }] })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: expect.stringContaining('segment store storage failed (injected write failure)'),
      });
    } finally {
      client.close();
    }
    await server.stop();
    expect(server.state).toBe('stopped');
  });

  it('runs and holds at most a bounded number of answers for a stream whose client sends but does not read', async () => {
    using dir = tempDir('kvt-ss-server-');
    await using server = await SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger });
    await server.engine.createSegment('1');
    const big = Buffer.alloc(600_000, 7);
    await server.engine.update({ segmentId: '1', modifications: ['a', 'b', 'c', 'd'].map((k) => ({ type: 'PUT' as const, family: 'f', key: Buffer.from(k), value: big })) });
    // Count the pages the store reads (instrumenting the real engine, which still does the work).
    let pagesRead = 0;
    const engine = server.engine;
    const read = engine.iterateInto.bind(engine);
    engine.iterateInto = (req, sinkFor) => {
      pagesRead++;
      return read(req, sinkFor);
    };
    // 300 requests for a ~1.8 MB page each (540 MB of answers) from a client that reads nothing yet
    // (over plain HTTP/2: a grpc-js client would read ~16 answers ahead into its own buffers).
    const iterate = { segmentId: '1', family: 'f', includeValues: true, maxItems: 10 };
    const call = unreadExecuteStream(
      `127.0.0.1:${server.port}`,
      Array.from({ length: 300 }, (_, id) => ({ id, iterate })),
    );
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      // At most the pages whose reserve fits the stream's answer bytes (~28), the one that crossed it
      // and one read ahead; before, the 64 that the count bound lets run, and before that all 300.
      const bound = Math.ceil(MAX_STREAM_ANSWER_BYTES / ITERATE_ANSWER_RESERVE) + 2;
      expect(bound).toBeLessThan(MAX_STREAM_IN_FLIGHT);
      expect(pagesRead, `${pagesRead} pages read`).toBeLessThanOrEqual(bound);
      const { answers, status } = await call.readAll();
      expect(status).toBe(grpc.status.OK);
      expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, id) => id));
      expect(answers.every((a) => a.iterate?.items.length === 3)).toBe(true);
    } finally {
      call.close();
    }
  }, 60_000);

  it('logs only the first few of many calls it rejects for a missing token, and how many more before it stops', async () => {
    using dir = tempDir('kvt-ss-server-');
    const lines: Record<string, unknown>[] = [];
    const log = jsonLogger('segmentstore', 'info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    await using server = await SegmentStoreServer.start({ port: 0, dataDir: dir.path, adminToken: 'admin-token-for-the-test' }, { log });
    const client = grpcAdapter(`127.0.0.1:${server.port}`);
    try {
      for (let i = 0; i < 50; i++) await expect(client.listSegments()).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    } finally {
      client.close();
    }
    // Before, 50 lines: a client could flood the store's log.
    const rejected = lines.filter((l) => l.msg === 'call rejected');
    expect(rejected).toHaveLength(5);
    expect(rejected[0]).toMatchObject({ level: 'warn', method: 'ListSegments', code: 'UNAUTHENTICATED' });
    // The count of the rest comes out as the store stops, before its last line (before: 10 s after
    // the first rejection, so after "stopped" in-process, and never from a process that exited first).
    await server.stop();
    const tail = lines.slice(lines.findIndex((l) => l.msg === 'call rejected: more suppressed'));
    expect(tail.map((l) => [l.msg, l.suppressed])).toEqual([
      ['call rejected: more suppressed', 45],
      ['segment store stopped', undefined],
    ]);
  });
});
