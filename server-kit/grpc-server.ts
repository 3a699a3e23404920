/** Binding and stopping a grpc-js server, with errors a person can act on. */
import type * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { GRPC_SERVER_OPTIONS, SERVER_RECEIVE_WINDOW_BYTES } from '../proto/load';
import { joinHostPort } from './address';
import { tolerantDecoding } from './status';

/**
 * The two internals of grpc-js's Server that decide how its HTTP/2 servers are made: the options
 * passed to `http2.createServer` and the method that creates them (for each bound address). grpc-js
 * has no server option for the receive window (its `grpc-node.flow_control_window` is a channel
 * option), so the window is opened here; test/unit/proto/grpc-server.test.ts checks it still is.
 */
interface ServerInternals {
  commonServerOptions?: http2.ServerOptions;
  createHttp2Server?: (credentials: grpc.ServerCredentials) => http2.Http2Server;
}

/** A grpc-js server whose services decode requests tolerantly (malformed bytes → INVALID_ARGUMENT, not INTERNAL). */
class KvtGrpcServer extends grpc.Server {
  constructor(options: grpc.ServerOptions) {
    super(options);
    openReceiveWindow(this as unknown as ServerInternals, SERVER_RECEIVE_WINDOW_BYTES);
  }

  override addService(service: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation): void {
    super.addService(tolerantDecoding(service), implementation);
  }
}

/** Advertises `bytes` as every stream's initial window and widens each connection's window to it. */
function openReceiveWindow(server: ServerInternals, bytes: number): void {
  const options = server.commonServerOptions;
  const create = server.createHttp2Server;
  if (!options || typeof create !== 'function') return;
  options.settings = { ...options.settings, initialWindowSize: bytes };
  server.createHttp2Server = function (this: unknown, credentials) {
    const http2Server = create.call(this, credentials);
    http2Server.on('session', (session: http2.ServerHttp2Session) => session.setLocalWindowSize(bytes));
    return http2Server;
  };
}

/** A new grpc-js server with kvt's shared options, and `options` (e.g. interceptors). */
export function newGrpcServer(options: grpc.ServerOptions = {}): grpc.Server {
  return new KvtGrpcServer({ ...GRPC_SERVER_OPTIONS, ...options });
}

/**
 * Binds `server` on host:port (port 0 = ephemeral; an IPv6 host such as `::1` is bracketed) and
 * resolves the bound port. A taken port rejects with "port 127.0.0.1:9090 is already in use", any
 * other failure with "cannot listen on …" and its cause.
 */
export function bindGrpcServer(server: grpc.Server, host: string, port: number, credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure()): Promise<number> {
  return new Promise((resolve, reject) => {
    const address = joinHostPort(host, port);
    server.bindAsync(address, credentials, (err, bound) => {
      if (err) {
        const taken = /EADDRINUSE|address already in use/i.test(err.message);
        reject(new Error(taken ? `port ${address} is already in use` : `cannot listen on ${address}: ${err.message}`));
        return;
      }
      resolve(bound);
    });
  });
}

/** Stops accepting calls, lets in-flight calls finish for up to `graceMs`, then forces shutdown. */
export function shutdownGrpcServer(server: grpc.Server, graceMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
