/**
 * `GET|POST /{db}/_changes`: the changes feed, each document once at its newest change. `since` (an
 * earlier `seq` or `last_seq`, `0` or `now`), `limit`, `style=all_docs` (every leaf), `include_docs`,
 * `conflicts`; `feed=normal` answers at once, `feed=longpoll` waits for a change up to `timeout` ms
 * (default 60,000; with `heartbeat` and no timeout, up to 10 minutes), writing a newline every
 * `heartbeat` ms meanwhile, as CouchDB does, so that proxies and clients keep the connection. Filters,
 * `descending` and `feed=continuous` are refused with 400.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ChangesResponse, DocumentStore, MAX_CHANGES_LIMIT, MAX_CHANGES_WAIT_MS, StoredDocument } from '../../client';
import type { CouchContext } from '../context';
import { badRequest } from '../errors';
import { boolParam, intParam, Query, stringParam } from '../query';

type DbParams = { db: string };

/** CouchDB's default wait of a longpoll without `timeout`. */
const DEFAULT_LONGPOLL_MS = 60_000;
/** Documents read at once for `include_docs`. */
const DOC_CONCURRENCY = 64;

/** A changes request, checked. */
interface ChangesRequest {
  since: string | undefined;
  now: boolean;
  limit: number | undefined;
  allLeaves: boolean;
  includeDocs: boolean;
  conflicts: boolean;
  longpoll: boolean;
  timeoutMs: number;
  heartbeatMs: number | undefined;
}

function changesRequest(q: Query): ChangesRequest {
  const feed = stringParam(q, 'feed') ?? 'normal';
  if (feed !== 'normal' && feed !== 'longpoll') throw badRequest(`feed=${feed} is not supported by this endpoint; use feed=normal or feed=longpoll`);
  const style = stringParam(q, 'style') ?? 'main_only';
  if (style !== 'main_only' && style !== 'all_docs') throw badRequest(`style must be main_only or all_docs, got ${JSON.stringify(style)}`);
  for (const unsupported of ['filter', 'doc_ids', 'selector', 'view']) if (q[unsupported] !== undefined) throw badRequest(`${unsupported} is not supported by this endpoint's changes feed`);
  if (boolParam(q, 'descending')) throw badRequest("descending is not supported by this endpoint's changes feed");
  const since = stringParam(q, 'since');
  const limit = intParam(q, 'limit', 0, Number.MAX_SAFE_INTEGER);
  const heartbeat = stringParam(q, 'heartbeat') === 'true' ? DEFAULT_LONGPOLL_MS : intParam(q, 'heartbeat', 1, MAX_CHANGES_WAIT_MS);
  const timeout = intParam(q, 'timeout', 0, Number.MAX_SAFE_INTEGER);
  return {
    since: since === undefined || since === '0' || since === 'now' ? undefined : since,
    now: since === 'now',
    // CouchDB answers limit=0 with one result.
    limit: limit === undefined ? undefined : Math.min(Math.max(limit, 1), MAX_CHANGES_LIMIT),
    allLeaves: style === 'all_docs',
    includeDocs: boolParam(q, 'include_docs') ?? false,
    conflicts: boolParam(q, 'conflicts') ?? false,
    longpoll: feed === 'longpoll',
    timeoutMs: Math.min(timeout ?? (heartbeat !== undefined ? MAX_CHANGES_WAIT_MS : DEFAULT_LONGPOLL_MS), MAX_CHANGES_WAIT_MS),
    heartbeatMs: heartbeat,
  };
}

/** The winning document of a change (its rev at the change, else the winner now; a tombstone for a deleted one). */
async function docOf(store: DocumentStore, id: string, rev: string, conflicts: boolean): Promise<StoredDocument | null> {
  return (await store.get(id, { rev, conflicts })) ?? (await store.get(id, { conflicts }));
}

/** The answer as CouchDB writes it. */
async function answerOf(store: DocumentStore, r: ChangesResponse, o: ChangesRequest): Promise<Record<string, unknown>> {
  const docs: (StoredDocument | null)[] = [];
  if (o.includeDocs) {
    for (let i = 0; i < r.results.length; i += DOC_CONCURRENCY) {
      docs.push(...(await Promise.all(r.results.slice(i, i + DOC_CONCURRENCY).map((c) => docOf(store, c.id, c.rev, o.conflicts)))));
    }
  }
  const results = r.results.map((c, i) => ({
    seq: c.seq,
    id: c.id,
    changes: (c.leaves ?? [c.rev]).map((rev) => ({ rev })),
    ...(c.deleted ? { deleted: true } : {}),
    ...(o.includeDocs ? { doc: docs[i] } : {}),
  }));
  return { results, last_seq: r.lastSeq };
}

/**
 * Starts writing heartbeats every `ms` while a longpoll waits: the first one sends the headers (200),
 * so that a failure before it can still be answered with its own status.
 */
function startHeartbeat(reply: FastifyReply, ms: number | undefined): { stop(): void; started(): boolean } {
  let started = false;
  const timer =
    ms === undefined
      ? undefined
      : setInterval(() => {
          if (!started) {
            started = true;
            reply.hijack();
            reply.raw.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'must-revalidate' });
          }
          reply.raw.write('\n');
        }, ms);
  return { stop: () => clearInterval(timer), started: () => started };
}

export function changesRoutes(app: FastifyInstance, ctx: CouchContext): void {
  const handler = async (params: DbParams, query: unknown, reply: FastifyReply) => {
    const o = changesRequest(query as Query);
    // The wait ends when the endpoint stops (ctx's signal) or the caller hangs up.
    const wait = ctx.startWait();
    const onClose = () => wait.done();
    const signal = wait.signal;
    reply.raw.once('close', () => wait.abort());
    const heartbeat = o.longpoll ? startHeartbeat(reply, o.heartbeatMs) : { stop: () => undefined, started: () => false };
    try {
      const answer = await ctx.withDatabase(params.db, async (db) => {
        const since = o.now ? await db.store.updateSeq() : o.since;
        const r = await db.store.changes({
          ...(since === undefined ? {} : { since }),
          ...(o.limit === undefined ? {} : { limit: o.limit }),
          allLeaves: o.allLeaves,
          timeoutMs: o.longpoll || o.now ? (o.longpoll ? o.timeoutMs : 0) : 0,
          signal,
        });
        return answerOf(db.store, r, o);
      });
      if (!heartbeat.started()) return answer;
      reply.raw.end(`${JSON.stringify(answer)}\n`);
      return reply;
    } catch (err) {
      // Headers already sent: the status cannot say it; the client sees the connection end and retries.
      if (!heartbeat.started()) throw err;
      reply.raw.destroy();
      return reply;
    } finally {
      heartbeat.stop();
      onClose();
    }
  };
  app.get<{ Params: DbParams }>('/:db/_changes', async (request, reply) => handler(request.params, request.query, reply));
  app.post<{ Params: DbParams }>('/:db/_changes', async (request, reply) => handler(request.params, request.query, reply));
}
