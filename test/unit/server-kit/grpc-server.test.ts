import * as http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { SERVER_RECEIVE_WINDOW_BYTES } from '../../../proto/load';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../../../server-kit/grpc-server';
import { healthClient, ProcessHealth } from '../../../server-kit/health';

/** Connects a plain HTTP/2 client and resolves its session once the server's SETTINGS (and window update) arrived. */
function connect(port: number): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.once('error', reject);
    session.once('remoteSettings', () => {
      // The connection-level WINDOW_UPDATE follows the SETTINGS frame; a ping round trip lets it land.
      session.ping(() => resolve(session));
    });
  });
}

describe('newGrpcServer', () => {
  let server: grpc.Server | undefined;
  let session: http2.ClientHttp2Session | undefined;

  afterEach(async () => {
    session?.destroy();
    if (server) await shutdownGrpcServer(server, 100);
    server = undefined;
  });

  it('opens a large HTTP/2 receive window for streams and the connection, so large requests are not sent in 64 KiB pieces', async () => {
    server = newGrpcServer();
    const port = await bindGrpcServer(server, '127.0.0.1', 0);
    session = await connect(port);
    expect(SERVER_RECEIVE_WINDOW_BYTES).toBeGreaterThanOrEqual(1024 * 1024);
    // Per stream: the server's SETTINGS_INITIAL_WINDOW_SIZE.
    expect(session.remoteSettings.initialWindowSize).toBe(SERVER_RECEIVE_WINDOW_BYTES);
    // Per connection: what the client may send before the server acknowledges anything.
    expect(session.state.remoteWindowSize).toBe(SERVER_RECEIVE_WINDOW_BYTES);
  });
});

describe('bindGrpcServer', () => {
  it('binds an IPv6 host given without brackets, and says "in use" only for a taken port', async () => {
    const server = newGrpcServer();
    const other = newGrpcServer();
    try {
      const port = await bindGrpcServer(server, '::1', 0);
      expect(port).toBeGreaterThan(0);
      await expect(bindGrpcServer(other, '::1', port)).rejects.toThrow(`port [::1]:${port} is already in use`);
      // Not an address of this machine: not "in use", and the cause is kept.
      await expect(bindGrpcServer(newGrpcServer(), '192.0.2.1', 0)).rejects.toThrow(/^cannot listen on 192\.0\.2\.1:0: .*EADDRNOTAVAIL/);
    } finally {
      await shutdownGrpcServer(server, 100);
      await shutdownGrpcServer(other, 100);
    }
  });
});

describe('shutdownGrpcServer', () => {
  it('lets calls in flight run for the grace period, then forces the server down and ends them', async () => {
    const server = newGrpcServer();
    const health = new ProcessHealth('kvt.test.Service');
    health.addTo(server);
    const port = await bindGrpcServer(server, '127.0.0.1', 0);
    health.serving();
    const client = healthClient(`127.0.0.1:${port}`);
    try {
      // A Watch runs until the server ends it: it holds a graceful shutdown.
      const call = client.Watch({ service: '' });
      call.on('error', () => undefined); // reported by 'status'
      const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      await new Promise((resolve) => call.once('data', resolve));
      await shutdownGrpcServer(server, 200);
      // Ended by the server going down (a graceful end would be OK, a Watch never ends on its own).
      expect((await ended).code).toBe(grpc.status.CANCELLED);
    } finally {
      client.close();
      health.close();
    }
  }, 10_000);
});
