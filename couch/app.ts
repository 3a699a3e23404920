/**
 * The CouchDB endpoint's HTTP application (fastify): request bodies parsed as JSON whatever their
 * content type (CouchDB clients do not all send one), tokens checked before any route runs, every
 * failure answered CouchDB's way (errors.ts), and the routes of routes/. Built apart from the
 * listening server so that tests can run it on any catalog (`app.inject`, or listening on port 0).
 */
import Fastify, { FastifyInstance, FastifyRequest } from 'fastify';
import { Access, Authorizer, CouchTokens } from './auth';
import type { DatabaseCatalog } from './catalog';
import { CouchContext } from './context';
import { badRequest, couchErrorOf, notFound } from './errors';
import { allDocsRoutes } from './routes/all-docs';
import { changesRoutes } from './routes/changes';
import { databaseRoutes } from './routes/databases';
import { documentRoutes } from './routes/documents';
import { localRoutes } from './routes/local';
import { replicationRoutes } from './routes/replication';
import { serverRoutes } from './routes/server';

/** Options of {@link buildCouchApp}. */
export interface CouchAppOptions {
  catalog: DatabaseCatalog;
  /** Partitions of a database created without `?q=`. */
  defaultPartitions: number;
  /** The largest request body accepted. */
  maxBodyBytes: number;
  /** The server's uuid (`GET /`). */
  uuid: string;
  tokens?: CouchTokens;
  /** PEM certificate and key: serve HTTPS. */
  https?: { cert: Buffer; key: Buffer };
  /** Told of every answer with a 5xx status (the endpoint logs them). */
  onServerError?: (fields: Record<string, unknown>) => void;
}

/** Per-route settings. */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route. @default 'data' */
    access?: Access;
    /** Keep the body as bytes (attachment URLs, which are refused). @default false */
    rawBody?: boolean;
  }
}

/** Document ids are up to 2,046 UTF-8 bytes, each up to 3 characters percent-encoded. */
const MAX_PARAM_LENGTH = 8192;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON body (undefined when empty). @throws CouchError 400 naming what is wrong. */
function parseJson(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw badRequest('the request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

function accessOf(request: FastifyRequest): Access {
  return request.routeOptions.config?.access ?? 'data';
}

/** The endpoint's application and its shared state. */
export function buildCouchApp(o: CouchAppOptions): { app: FastifyInstance; context: CouchContext } {
  const app = Fastify({
    logger: false,
    bodyLimit: o.maxBodyBytes,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    ...(o.https ? { https: { cert: o.https.cert, key: o.https.key } } : {}),
  }) as unknown as FastifyInstance;
  const context = new CouchContext(o.catalog, o.defaultPartitions, o.uuid);
  const auth = new Authorizer(o.tokens ?? {});

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (request.routeOptions.config?.rawBody) return done(null, body);
    try {
      done(null, parseJson(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addHook('onRequest', async (request) => {
    auth.check(request.headers.authorization, accessOf(request));
  });
  app.setErrorHandler((err, request, reply) => {
    const e = couchErrorOf(err, o.maxBodyBytes);
    if (e.status >= 500) o.onServerError?.({ method: request.method, url: request.url.split('?')[0], status: e.status, error: e.error, reason: e.reason });
    if (e.status === 401) reply.header('www-authenticate', 'Basic realm="kvt"');
    void reply.code(e.status).send(e.toJSON());
  });
  app.setNotFoundHandler(async (request) => {
    throw notFound(`kvt's CouchDB endpoint does not serve ${request.method} ${request.url.split('?')[0]}`);
  });

  for (const routes of [serverRoutes, databaseRoutes, replicationRoutes, allDocsRoutes, changesRoutes, localRoutes, documentRoutes]) routes(app, context);
  return { app, context };
}
