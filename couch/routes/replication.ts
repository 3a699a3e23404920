/**
 * What a replicator calls besides the changes feed: `POST /{db}/_revs_diff` (which revs are missing),
 * `POST /{db}/_bulk_get` (leaves with their paths, `latest` and `revs`), and `POST /{db}/_bulk_docs`
 * (`new_edits: false` stores revisions as sent; otherwise each document is an edit with its own
 * outcome). A bulk is checked whole before anything is written.
 */
import type { FastifyInstance } from 'fastify';
import { DocumentStore, InvalidArgumentError, KvtError, OpenRev } from '../../client';
import type { CouchContext } from '../context';
import { kindOf, newDocumentId, storeDocument } from '../documents';
import { badRequest, couchErrorOf } from '../errors';
import { arrayMember, boolParam, objectBody, Query } from '../query';

type DbParams = { db: string };

/** Items of a `_bulk_get` read at once. */
const BULK_GET_CONCURRENCY = 128;

/** One `_bulk_get` request item. */
interface BulkGetItem {
  id: string;
  rev?: string;
}

function bulkGetItems(body: unknown): BulkGetItem[] {
  return arrayMember(objectBody(body, '_bulk_get'), 'docs', '_bulk_get').map((raw, i) => {
    const item = raw as { id?: unknown; rev?: unknown };
    if (raw === null || typeof raw !== 'object' || typeof item.id !== 'string') throw badRequest(`docs[${i}] must be an object with "id", a string; got ${kindOf(raw)}`);
    if (item.rev !== undefined && typeof item.rev !== 'string') throw badRequest(`docs[${i}].rev must be a string, got ${kindOf(item.rev)}`);
    return { id: item.id, ...(item.rev === undefined ? {} : { rev: item.rev }) };
  });
}

/** The answer for one `_bulk_get` item: the leaves it names, or the error of each rev that is not one. */
async function bulkGetOne(store: DocumentStore, item: BulkGetItem, o: { revs: boolean; latest: boolean }): Promise<{ id: string; docs: unknown[] }> {
  const error = (rev: string | undefined, err: string, reason: string) => ({ error: { id: item.id, rev: rev ?? null, error: err, reason } });
  try {
    if (item.rev === undefined) {
      const doc = await store.get(item.id, { revs: o.revs });
      return { id: item.id, docs: [doc === null ? error(undefined, 'not_found', 'missing') : { ok: doc }] };
    }
    const found: OpenRev[] = await store.openRevs(item.id, [item.rev], o);
    return { id: item.id, docs: found.map((r) => ('ok' in r ? r : error(r.missing, 'not_found', 'missing'))) };
  } catch (err) {
    // A bad id or rev fails its item only, as in CouchDB; an unreachable store fails the request.
    if (!(err instanceof InvalidArgumentError)) throw err;
    return { id: item.id, docs: [error(item.rev, 'bad_request', err.message)] };
  }
}

export function replicationRoutes(app: FastifyInstance, ctx: CouchContext): void {
  app.post<{ Params: DbParams }>('/:db/_revs_diff', async (request) => {
    const body = objectBody(request.body, '_revs_diff');
    return ctx.withDatabase(request.params.db, async (db) => db.store.revsDiff(body as Record<string, string[]>));
  });

  app.post<{ Params: DbParams }>('/:db/_bulk_get', async (request) => {
    const items = bulkGetItems(request.body);
    const q = request.query as Query;
    const o = { revs: boolParam(q, 'revs') ?? false, latest: boolParam(q, 'latest') ?? false };
    return ctx.withDatabase(request.params.db, async (db) => {
      const results: { id: string; docs: unknown[] }[] = [];
      for (let i = 0; i < items.length; i += BULK_GET_CONCURRENCY) {
        results.push(...(await Promise.all(items.slice(i, i + BULK_GET_CONCURRENCY).map((item) => bulkGetOne(db.store, item, o)))));
      }
      return { results };
    });
  });

  app.post<{ Params: DbParams }>('/:db/_bulk_docs', async (request, reply) => {
    const body = objectBody(request.body, '_bulk_docs');
    const newEdits = body.new_edits === undefined ? true : body.new_edits;
    if (typeof newEdits !== 'boolean') throw badRequest(`new_edits must be true or false, got ${kindOf(newEdits)}`);
    const docs = arrayMember(body, 'docs', '_bulk_docs').map((raw, i) => {
      const doc = storeDocument(raw, `docs[${i}]`);
      if (newEdits && doc._id === undefined) doc._id = newDocumentId();
      return doc;
    });
    return ctx.withDatabase(request.params.db, async (db) => {
      const results = await db.store.bulkDocs(docs, { newEdits });
      // CouchDB answers a replication write with no per-document results.
      if (!newEdits) return reply.code(201).send([]);
      const answer = results.map((r) => {
        if (r.error === undefined) return { ok: true, id: r.id, rev: r.rev };
        const e = couchErrorOf(r.error as KvtError, 0);
        return { id: r.id, error: e.error, reason: e.reason };
      });
      return reply.code(201).send(answer);
    });
  });
}
