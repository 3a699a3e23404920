/**
 * The small HTTP servers beside a process's gRPC port (Prometheus metrics, the controller's status
 * page): bound like the gRPC server, with the same one-line errors, and stopped without waiting for
 * idle keep-alive connections.
 */
import * as http from 'node:http';
import { joinHostPort } from './address';

/** A listening HTTP server and the port it got. */
export interface HttpEndpoint {
  readonly server: http.Server;
  readonly port: number;
  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Listens on host:port (0 = ephemeral) with `handler`; a handler that throws or rejects answers 500.
 * @throws Error "port HOST:PORT is already in use", or "cannot listen on HOST:PORT: …"
 */
export function startHttpServer(host: string, port: number, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>): Promise<HttpEndpoint> {
  const server = http.createServer((req, res) => {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`internal error: ${(err as Error)?.message ?? String(err)}\n`);
      });
  });
  // A scrape or a page refresh is short: drop connections idle longer than a scrape interval.
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    const address = joinHostPort(host, port);
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(err.code === 'EADDRINUSE' ? `port ${address} is already in use` : `cannot listen on ${address}: ${err.message}`));
    });
    server.listen(port, host, () => {
      const bound = (server.address() as { port: number }).port;
      let closed: Promise<void> | undefined;
      const close = () =>
        (closed ??= new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }));
      resolve({ server, port: bound, close });
    });
  });
}
