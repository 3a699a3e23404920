/**
 * withAuth and the guard under it, on a real gRPC server: a segment store's service whose handlers
 * only note that they ran, reached by raw calls and streams with chosen `authorization` metadata.
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { segmentStoreService } from '../../../proto/load';
import { AuthTokens, withAuth } from '../../../server-kit/auth';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../../../server-kit/grpc-server';
import { bidiStreaming, unary } from '../../../server-kit/status';
import { rawCall, rawStream } from '../../integration/security-helpers';

const ADMIN = 'admin-token-1';
const DATA = 'data-token-2';
const WRONG = 'wrong-token-3';
const PEER = expect.stringMatching(/^127\.0\.0\.1:\d+$/);

/** The handlers of a store whose calls only note that they ran (ListSegments: data; CreateSegment: admin; ExecuteStream). */
function notingHandlers(ran: string[]): grpc.UntypedServiceImplementation {
  return {
    ListSegments: unary(async () => {
      ran.push('ListSegments');
      return { segments: [] };
    }),
    CreateSegment: unary(async () => {
      ran.push('CreateSegment');
      return {};
    }),
    ExecuteStream: bidiStreaming((call: grpc.ServerDuplexStream<{ id: number }, { id: number }>) => {
      ran.push('ExecuteStream');
      call.on('data', (msg: { id: number }) => call.write({ id: msg.id }));
      call.on('end', () => call.end());
    }),
  };
}

/** A server with those handlers behind withAuth(tokens), CreateSegment an admin method; what ran and what was refused. */
async function guardedServer(tokens: AuthTokens) {
  const ran: string[] = [];
  const rejected: Record<string, unknown>[] = [];
  const server = newGrpcServer();
  server.addService(
    segmentStoreService(),
    withAuth(notingHandlers(ran), tokens, new Set(['CreateSegment']), (fields) => rejected.push(fields)),
  );
  const port = await bindGrpcServer(server, '127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, ran, rejected, [Symbol.asyncDispose]: () => shutdownGrpcServer(server, 100) };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('withAuth', () => {
  it('answers a call without a bearer token UNAUTHENTICATED and one with another token PERMISSION_DENIED, reporting each and never running its handler', async () => {
    await using s = await guardedServer({ adminToken: ADMIN, dataToken: DATA });
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {})).toEqual({
      ok: false,
      status: grpc.status.UNAUTHENTICATED,
      code: 'UNAUTHENTICATED',
      message: 'ListSegments needs a bearer token: send metadata "authorization: Bearer <token>"',
    });
    // A token under another scheme is no bearer token.
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, { authorization: `Basic ${DATA}` })).toMatchObject({ status: grpc.status.UNAUTHENTICATED, code: 'UNAUTHENTICATED' });
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, { authorization: DATA })).toMatchObject({ status: grpc.status.UNAUTHENTICATED });
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, bearer(WRONG))).toEqual({
      ok: false,
      status: grpc.status.PERMISSION_DENIED,
      code: 'PERMISSION_DENIED',
      message: 'ListSegments was called with a token this server does not accept',
    });
    expect(s.ran).toEqual([]);
    expect(s.rejected).toEqual([
      { method: 'ListSegments', code: 'UNAUTHENTICATED', peer: PEER },
      { method: 'ListSegments', code: 'UNAUTHENTICATED', peer: PEER },
      { method: 'ListSegments', code: 'UNAUTHENTICATED', peer: PEER },
      { method: 'ListSegments', code: 'PERMISSION_DENIED', peer: PEER },
    ]);
    // The scheme is read case-insensitively, as HTTP reads it.
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, { authorization: `bearer  ${DATA}` })).toEqual({ ok: true });
    expect(s.ran).toEqual(['ListSegments']);
  });

  it('lets the data token call data methods only, and the admin token every method', async () => {
    await using s = await guardedServer({ adminToken: ADMIN, dataToken: DATA });
    expect(await rawCall('SegmentStore', s.address, 'CreateSegment', {}, bearer(DATA))).toMatchObject({
      status: grpc.status.PERMISSION_DENIED,
      message: 'CreateSegment needs the admin token; the data token is not enough',
    });
    expect(await rawCall('SegmentStore', s.address, 'CreateSegment', {}, bearer(ADMIN))).toEqual({ ok: true });
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, bearer(DATA))).toEqual({ ok: true });
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, bearer(ADMIN))).toEqual({ ok: true });
    expect(s.ran).toEqual(['CreateSegment', 'ListSegments', 'ListSegments']);
  });

  it('checks the token when a stream opens: a refused stream fails with the code trailer and its handler never runs', async () => {
    await using s = await guardedServer({ adminToken: ADMIN, dataToken: DATA });
    expect(await rawStream(s.address)).toEqual({
      ok: false,
      status: grpc.status.UNAUTHENTICATED,
      code: 'UNAUTHENTICATED',
      message: 'ExecuteStream needs a bearer token: send metadata "authorization: Bearer <token>"',
    });
    expect(await rawStream(s.address, bearer(WRONG))).toMatchObject({ ok: false, status: grpc.status.PERMISSION_DENIED, code: 'PERMISSION_DENIED' });
    expect(s.ran).toEqual([]);
    expect(await rawStream(s.address, bearer(DATA))).toEqual({ ok: true });
    expect(s.ran).toEqual(['ExecuteStream']);
  });

  it('requires the admin token on every call of a server that has only an admin token', async () => {
    await using s = await guardedServer({ adminToken: ADMIN });
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {})).toMatchObject({ status: grpc.status.UNAUTHENTICATED, code: 'UNAUTHENTICATED' });
    // There is no data token to compare with: any other token is refused.
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, bearer(DATA))).toMatchObject({
      status: grpc.status.PERMISSION_DENIED,
      code: 'PERMISSION_DENIED',
      message: 'ListSegments was called with a token this server does not accept',
    });
    expect(await rawStream(s.address, bearer(WRONG))).toMatchObject({ status: grpc.status.PERMISSION_DENIED });
    expect(s.ran).toEqual([]);
    expect(await rawCall('SegmentStore', s.address, 'ListSegments', {}, bearer(ADMIN))).toEqual({ ok: true });
    expect(await rawStream(s.address, bearer(ADMIN))).toEqual({ ok: true });
    expect(s.ran).toEqual(['ListSegments', 'ExecuteStream']);
  });

  it('leaves the handlers of a server without tokens as they are', () => {
    const handlers = notingHandlers([]);
    expect(withAuth(handlers, {}, new Set(['CreateSegment']))).toBe(handlers);
  });
});
