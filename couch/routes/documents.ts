/**
 * One document: `GET|PUT|DELETE /{db}/{docid}` and `/{db}/_design/{name}` (design documents are
 * stored as documents; no views run). `GET` takes `rev`, `revs`, `revs_info`, `open_revs`, `latest`,
 * `conflicts`, `deleted_conflicts`; `PUT` takes `rev` and `new_edits=false` (a replicated revision).
 * Attachment URLs (`/{db}/{docid}/{name}`) are refused with 415.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DocumentStore, DocumentWriteResult, StoredDocument } from '../../client';
import type { CouchContext } from '../context';
import { bodyOf, deletedOf, kindOf, revOfWrite, storeDocument } from '../documents';
import { attachmentsRefused, badRequest, CouchError, notFound } from '../errors';
import { boolParam, jsonParam, objectBody, Query, stringParam } from '../query';

type DocParams = { db: string; docid: string };

/**
 * Writes one document: replicated as sent with `newEdits` false, else an edit of `_rev` (or the `rev`
 * parameter) — a deletion with `_deleted: true`.
 */
export async function writeDocument(store: DocumentStore, doc: Record<string, unknown>, queryRev: string | undefined, field: string, newEdits = true): Promise<DocumentWriteResult> {
  if (!newEdits) {
    const [result] = await store.bulkDocs([doc], { newEdits: false });
    return { id: result.id, rev: result.rev! };
  }
  const rev = revOfWrite(doc, queryRev, field);
  const { _revisions: _, ...rest } = doc;
  return store.put(doc._id as string, bodyOf(rest), { ...(rev === undefined ? {} : { rev }), deleted: deletedOf(doc, field) });
}

/** CouchDB's `_revs_info` from a leaf's path: the leaf available (or deleted), its ancestors' bodies not kept. */
function revsInfoOf(doc: StoredDocument): { rev: string; status: string }[] {
  const { start, ids } = doc._revisions!;
  return ids.map((hash, i) => ({ rev: `${start - i}-${hash}`, status: i > 0 ? 'missing' : doc._deleted ? 'deleted' : 'available' }));
}

/** `open_revs`: "all" or a JSON array of revs. */
function openRevsParam(q: Query): string[] | 'all' | undefined {
  const raw = stringParam(q, 'open_revs');
  if (raw === undefined || raw === 'all') return raw;
  const revs = jsonParam(q, 'open_revs');
  if (!Array.isArray(revs) || revs.some((r) => typeof r !== 'string')) throw badRequest(`query parameter open_revs must be "all" or a JSON array of revs, got ${kindOf(revs)}`);
  return revs as string[];
}

/** The id a route names; `_design/` ids come from their own route, other `_` ids are not documents. */
function docIdOf(request: FastifyRequest<{ Params: DocParams }>, design: boolean): string {
  const id = design ? `_design/${request.params.docid}` : request.params.docid;
  if (!design && id.startsWith('_')) throw notFound(`kvt's CouchDB endpoint does not serve ${request.method} /${request.params.db}/${id}`);
  return id;
}

async function getDocument(ctx: CouchContext, request: FastifyRequest<{ Params: DocParams }>, reply: FastifyReply, id: string): Promise<unknown> {
  const q = request.query as Query;
  const revs = boolParam(q, 'revs') ?? false;
  const latest = boolParam(q, 'latest') ?? false;
  const openRevs = openRevsParam(q);
  return ctx.withDatabase(request.params.db, async (db) => {
    if (openRevs !== undefined) return db.store.openRevs(id, openRevs, { latest, revs });
    const revsInfo = boolParam(q, 'revs_info') ?? false;
    const rev = stringParam(q, 'rev');
    const doc = await db.store.get(id, {
      ...(rev === undefined ? {} : { rev }),
      revs: revs || revsInfo,
      conflicts: boolParam(q, 'conflicts') ?? false,
      deletedConflicts: boolParam(q, 'deleted_conflicts') ?? false,
    });
    if (doc === null) {
      const deleted = rev === undefined && (await db.store.openRevs(id, 'all')).length > 0;
      throw notFound(deleted ? 'deleted' : 'missing');
    }
    if (revsInfo) {
      doc._revs_info = revsInfoOf(doc);
      if (!revs) delete doc._revisions;
    }
    void reply.header('etag', `"${doc._rev}"`);
    return doc;
  });
}

async function putDocument(ctx: CouchContext, request: FastifyRequest<{ Params: DocParams }>, reply: FastifyReply, id: string): Promise<unknown> {
  const q = request.query as Query;
  const doc = storeDocument(objectBody(request.body, `PUT /${request.params.db}/${id}`), 'the document');
  if (doc._id !== undefined && doc._id !== id) throw badRequest(`the document's _id ${JSON.stringify(doc._id)} is not the id of its URL (${JSON.stringify(id)})`);
  doc._id = id;
  const newEdits = boolParam(q, 'new_edits') ?? true;
  return ctx.withDatabase(request.params.db, async (db) => {
    const result = await writeDocument(db.store, doc, stringParam(q, 'rev'), 'the document', newEdits);
    void reply.header('etag', `"${result.rev}"`);
    return reply.code(201).send({ ok: true, ...result });
  });
}

async function deleteDocument(ctx: CouchContext, request: FastifyRequest<{ Params: DocParams }>, id: string): Promise<unknown> {
  const rev = stringParam(request.query as Query, 'rev');
  if (rev === undefined) throw new CouchError(409, 'conflict', `Document update conflict: deleting ${JSON.stringify(id)} needs its rev (?rev=)`);
  return ctx.withDatabase(request.params.db, async (db) => ({ ok: true, ...(await db.store.remove(id, rev)) }));
}

export function documentRoutes(app: FastifyInstance, ctx: CouchContext): void {
  for (const [path, design] of [
    ['/:db/_design/:docid', true],
    ['/:db/:docid', false],
  ] as const) {
    app.get<{ Params: DocParams }>(path, async (request, reply) => getDocument(ctx, request, reply, docIdOf(request, design)));
    app.put<{ Params: DocParams }>(path, async (request, reply) => putDocument(ctx, request, reply, docIdOf(request, design)));
    app.delete<{ Params: DocParams }>(path, async (request) => deleteDocument(ctx, request, docIdOf(request, design)));
  }
  for (const [path, design] of [
    ['/:db/_design/:docid/*', true],
    ['/:db/:docid/*', false],
  ] as const) {
    app.route<{ Params: DocParams & { '*': string } }>({
      method: ['GET', 'PUT', 'DELETE'],
      url: path,
      config: { rawBody: true },
      handler: async (request) => {
        const url = `/${request.params.db}/${design ? '_design/' : ''}${request.params.docid}/${request.params['*']}`;
        // A design document's views, shows, … (`_view/…`) are not served; any other name is an attachment.
        if (request.params['*'].startsWith('_') || (!design && request.params.docid.startsWith('_'))) throw notFound(`kvt's CouchDB endpoint does not serve ${request.method} ${url}`);
        throw attachmentsRefused(`${request.method} ${url}`);
      },
    });
  }
}
