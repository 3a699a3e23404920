/** Binding and stopping a grpc-js server, with errors a person can act on. */
import * as grpc from '@grpc/grpc-js';
import { GRPC_SERVER_OPTIONS } from '../load';
import { tolerantDecoding } from './status';

/** A grpc-js server whose services decode requests tolerantly (malformed bytes → INVALID_ARGUMENT, not INTERNAL). */
class KvtGrpcServer extends grpc.Server {
  override addService(service: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation): void {
    super.addService(tolerantDecoding(service), implementation);
  }
}

/** A new grpc-js server with kvt's shared options. */
export function newGrpcServer(): grpc.Server {
  return new KvtGrpcServer(GRPC_SERVER_OPTIONS);
}

/**
 * Binds `server` on host:port (port 0 = ephemeral) and resolves the bound port.
 * A taken port rejects with "port 127.0.0.1:9090 is already in use".
 */
export function bindGrpcServer(
  server: grpc.Server,
  host: string,
  port: number,
  credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, credentials, (err, bound) => {
      if (err) {
        const taken = /EADDRINUSE|address already in use|No address added/i.test(err.message);
        reject(new Error(taken ? `port ${host}:${port} is already in use` : `cannot listen on ${host}:${port}: ${err.message}`));
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
