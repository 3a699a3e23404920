/**
 * `--metrics-port`: a process's Prometheus registry in the text exposition format at `GET /metrics`
 * on its own HTTP port (off unless the flag is given; 0 = an ephemeral port, logged).
 */
import type { Registry } from 'prom-client';
import { HttpEndpoint, startHttpServer } from '../http-server';

/** Serves `registry` at `/metrics` on host:port. @throws as startHttpServer */
export function startMetricsServer(registry: Registry, host: string, port: number): Promise<HttpEndpoint> {
  return startHttpServer(host, port, async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (url.pathname !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : text);
  });
}
