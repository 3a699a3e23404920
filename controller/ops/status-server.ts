/**
 * `--http-port`: the controller's read-only status page. `GET /` is the page, `GET /api/status` its
 * data (cluster-status.ts), refreshed by the page every second. Nothing here changes the cluster, and
 * it needs no token: run it on an address only operators reach (it binds `--host`, loopback by default).
 */
import { HttpEndpoint, startHttpServer } from '../../server-kit/http-server';
import type { ClusterStatus } from './cluster-status';
import { STATUS_PAGE_HTML } from './status-page';

/** How often the page asks for the status again. */
export const STATUS_REFRESH_MS = 1_000;

/** Serves the page and `status()` as its data on host:port. @throws as startHttpServer */
export function startStatusServer(host: string, port: number, status: () => Promise<ClusterStatus>): Promise<HttpEndpoint> {
  return startHttpServer(host, port, async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    const security = {
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
    };
    if (path === '/' || path === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...security });
      res.end(req.method === 'HEAD' ? undefined : STATUS_PAGE_HTML);
    } else if (path === '/api/status') {
      const body = JSON.stringify(await status());
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...security });
      res.end(req.method === 'HEAD' ? undefined : body);
    } else if (path === '/favicon.ico') {
      res.writeHead(204).end();
    } else {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: the status page is at /, its data at /api/status\n');
    }
  });
}
