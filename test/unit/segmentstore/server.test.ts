import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../proto/runtime/log';
import { SegmentStoreServer } from '../../../segmentstore/server';
import { failNextChainedWrite } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';
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
    await expect(SegmentStoreServer.start({ port: 0, dataDir: dir.path }, { log: silentLogger })).rejects.toThrow(
      `data directory ${dir.path} is in use by another segment store`,
    );
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
      const fault = failNextChainedWrite('injected write failure');
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
});
