/**
 * The servers' one mapping from thrown errors to gRPC status and trailers (status.ts), seen by a real
 * client of a real gRPC server whose handler throws.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE_TRAILER, ERROR_INDEX_TRAILER, ErrorCodes, RETRY_AFTER_TRAILER } from '../../../proto/error-codes';
import { GRPC_CHANNEL_OPTIONS, kvtPackage, segmentStoreService } from '../../../proto/load';
import { KvtFault } from '../../../server-kit/fault';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../../../server-kit/grpc-server';
import { faultOf, unary } from '../../../server-kit/status';

describe('unary and toServiceError', () => {
  let thrown: unknown;
  const internal: unknown[] = [];
  let server: grpc.Server;
  let client: grpc.Client;

  beforeAll(async () => {
    server = newGrpcServer();
    const handlers = {
      ListSegments: unary(
        () => Promise.reject(thrown),
        (err) => internal.push(err),
      ),
    };
    server.addService(segmentStoreService(), handlers);
    const port = await bindGrpcServer(server, '127.0.0.1', 0);
    client = new (kvtPackage().SegmentStore)(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
  });
  afterAll(async () => {
    client?.close();
    await shutdownGrpcServer(server, 100);
  });

  /** How a ListSegments call fails when its handler throws `err`: status, message and the kvt trailers. */
  async function failure(err: unknown): Promise<{ status: grpc.status; message: string; trailers: Record<string, unknown> }> {
    thrown = err;
    const list = (client as unknown as Record<string, (req: object, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void>).ListSegments;
    const e = await new Promise<grpc.ServiceError | null>((resolve) => list.call(client, {}, { deadline: Date.now() + 5_000 }, resolve));
    if (!e) throw new Error('the call did not fail');
    const trailers: Record<string, unknown> = {};
    for (const name of [ERROR_CODE_TRAILER, ERROR_INDEX_TRAILER, RETRY_AFTER_TRAILER]) {
      const value = e.metadata.get(name)[0];
      if (value !== undefined) trailers[name] = value;
    }
    return { status: e.code, message: e.details, trailers };
  }

  it('answers a KvtFault with the status of its code, its message, and the code, index and retry-after trailers', async () => {
    expect(await failure(new KvtFault(ErrorCodes.OVERLOADED, 'the store is overloaded; retry later', 3, 250))).toEqual({
      status: grpc.status.UNAVAILABLE,
      message: 'the store is overloaded; retry later',
      trailers: { [ERROR_CODE_TRAILER]: 'OVERLOADED', [ERROR_INDEX_TRAILER]: '3', [RETRY_AFTER_TRAILER]: '250' },
    });
    // No index, no retry hint: no such trailers (an index of 0 is one).
    expect(await failure(new KvtFault(ErrorCodes.BAD_KEY_VERSION, 'modifications[0]: the key already exists', 0))).toEqual({
      status: grpc.status.FAILED_PRECONDITION,
      message: 'modifications[0]: the key already exists',
      trailers: { [ERROR_CODE_TRAILER]: 'BAD_KEY_VERSION', [ERROR_INDEX_TRAILER]: '0' },
    });
    expect(await failure(new KvtFault(ErrorCodes.TABLE_NOT_FOUND, 'table s/t does not exist'))).toEqual({
      status: grpc.status.NOT_FOUND,
      message: 'table s/t does not exist',
      trailers: { [ERROR_CODE_TRAILER]: 'TABLE_NOT_FOUND' },
    });
    expect(internal).toEqual([]);
  });

  it('keeps the code and index of any error that carries a kvt code, and answers anything else INTERNAL, telling onInternal', async () => {
    const coded = Object.assign(new Error('segment 7 does not exist'), { code: 'SEGMENT_NOT_FOUND', index: 1 });
    expect(await failure(coded)).toEqual({
      status: grpc.status.NOT_FOUND,
      message: 'segment 7 does not exist',
      trailers: { [ERROR_CODE_TRAILER]: 'SEGMENT_NOT_FOUND', [ERROR_INDEX_TRAILER]: '1' },
    });
    const disk = Object.assign(new Error('disk full'), { code: 'ENOSPC' });
    expect(await failure(disk)).toEqual({ status: grpc.status.INTERNAL, message: 'internal error: disk full', trailers: { [ERROR_CODE_TRAILER]: 'INTERNAL' } });
    expect(await failure('boom')).toMatchObject({ status: grpc.status.INTERNAL, message: 'internal error: boom' });
    expect(internal).toEqual([disk, 'boom']);
  });
});

describe('faultOf', () => {
  it('gives a KvtFault as it is, and a coded error its code, message and index', () => {
    const fault = new KvtFault(ErrorCodes.NO_SUCH_KEY, 'no key', 4);
    expect(faultOf(fault)).toBe(fault);
    expect(faultOf({ code: 'BAD_KEY_VERSION', message: 'stale', index: 2 })).toMatchObject({ code: 'BAD_KEY_VERSION', message: 'stale', index: 2 });
    expect(faultOf({ code: 'UNAVAILABLE' })).toMatchObject({ code: 'UNAVAILABLE', message: 'UNAVAILABLE', index: -1 });
    expect(faultOf(undefined)).toMatchObject({ code: 'INTERNAL', message: 'internal error: undefined' });
  });
});
