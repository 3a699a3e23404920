/**
 * The client's Execute streams (client/internal/execute-streams.ts) against the store's own service,
 * served in-process over real gRPC: many calls share one stream per store, each answer is matched to
 * its call by id, and an answer that comes after its call gave up (its deadline passed) is dropped —
 * never handed to another call waiting on the same stream.
 */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { Connections } from '../../../client/internal/connections';
import { ExecuteStreams } from '../../../client/internal/execute-streams';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../../../server-kit/grpc-server';
import { silentLogger } from '../../../server-kit/log';
import { executeStreams, segmentStoreDefinition, segmentStoreHandlers } from '../../../segmentstore/service/segment-store-service';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import { tempDir } from '../../harness/process';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A store's service on an engine in a temp dir whose Gets of a key wait until `release(key)`. */
async function storeHoldingGets(): Promise<{ address: string; release: (key: string) => void }> {
  const dir = tempDir('kvt-client-streams-');
  cleanup.push(dir.dispose);
  const engine = await SegmentEngine.open(path.join(dir.path, 'db'), { expirySweepIntervalMs: 0 });
  cleanup.push(() => engine.close());
  await engine.createSegment('1');
  for (const key of ['early', 'late']) await engine.update({ segmentId: '1', modifications: [{ type: 'PUT', family: '', key: Buffer.from(key), value: Buffer.from(`value of ${key}`) }] });
  const gates = new Map<string, () => void>();
  const held = new Map<string, Promise<void>>();
  for (const key of ['early', 'late']) held.set(key, new Promise<void>((r) => gates.set(key, r)));
  const get = engine.get.bind(engine);
  engine.get = async (req, budget) => {
    await held.get(Buffer.from(req.keys?.[0]?.key ?? []).toString());
    return get(req, budget);
  };
  const streams = executeStreams(engine, silentLogger);
  const server = newGrpcServer();
  server.addService(segmentStoreDefinition(), segmentStoreHandlers(engine, silentLogger, streams));
  const port = await bindGrpcServer(server, '127.0.0.1', 0);
  cleanup.push(async () => {
    for (const open of gates.values()) open();
    await streams.close();
    await shutdownGrpcServer(server, 1_000);
  });
  return { address: `127.0.0.1:${port}`, release: (key) => gates.get(key)!() };
}

const getOf = (key: string) => ({ requests: [{ get: { segmentId: '1', keys: [{ family: '', key: Buffer.from(key) }] } }] });

describe('the client Execute streams', () => {
  it('drops an answer that comes after its call gave up, and gives the call waiting beside it its own answer', async () => {
    const { address, release } = await storeHoldingGets();
    const connections = new Connections('127.0.0.1:1');
    const streams = new ExecuteStreams(connections);
    cleanup.push(() => {
      streams.close();
      connections.close();
    });
    const gaveUp = streams.execute(address, getOf('early'), Date.now() + 300);
    const waiting = streams.execute(address, getOf('late'), Date.now() + 20_000);
    await expect(gaveUp).rejects.toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    // The store answers the call that gave up, on the stream the other call still waits on.
    release('early');
    await new Promise((r) => setTimeout(r, 300));
    release('late');
    const answer = await waiting;
    const entries = answer.responses[0].get?.entries ?? [];
    expect(entries.map((e) => [Buffer.from(e.key).toString(), Buffer.from(e.value).toString()])).toEqual([['late', 'value of late']]);
  });
});
