/** `GET /` (the welcome a client reads the server's uuid from), `GET /_up`, `GET /_all_dbs`, `GET /_uuids`. */
import type { FastifyInstance } from 'fastify';
import type { CouchContext } from '../context';
import { newDocumentId } from '../documents';
import { intParam, Query } from '../query';

/**
 * The CouchDB version announced: the 3.x API whose replication protocol the endpoint speaks (clients
 * read it to choose the protocol); `vendor` says what serves it.
 */
export const COUCHDB_API_VERSION = '3.3.3';

export function serverRoutes(app: FastifyInstance, ctx: CouchContext): void {
  app.get('/', { config: { access: 'open' } }, async () => ({ couchdb: 'Welcome', version: COUCHDB_API_VERSION, uuid: ctx.uuid, vendor: { name: 'kvt' }, features: [] }));
  app.get('/_up', { config: { access: 'open' } }, async () => ({ status: 'ok' }));
  app.get('/_all_dbs', async () => ctx.catalog.list());
  app.get('/_uuids', async (request) => {
    const count = intParam(request.query as Query, 'count', 1, 1000) ?? 1;
    return { uuids: Array.from({ length: count }, newDocumentId) };
  });
}
