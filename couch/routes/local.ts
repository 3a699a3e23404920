/**
 * `GET|PUT|DELETE /{db}/_local/{id}`: local documents, where replicators keep their checkpoints. A
 * write names the rev it replaces (`_rev` or `?rev=`, `0-<n>`); a stale one is a 409.
 */
import type { FastifyInstance } from 'fastify';
import { LOCAL_ID_PREFIX } from '../../client';
import type { CouchContext } from '../context';
import { bodyOf, deletedOf, revOfWrite, storeDocument } from '../documents';
import { badRequest, CouchError, notFound } from '../errors';
import { objectBody, Query, stringParam } from '../query';

type LocalParams = { db: string; id: string };

export function localRoutes(app: FastifyInstance, ctx: CouchContext): void {
  app.get<{ Params: LocalParams }>('/:db/_local/:id', async (request) =>
    ctx.withDatabase(request.params.db, async (db) => {
      const doc = await db.store.getLocal(request.params.id);
      if (doc === null) throw notFound('missing');
      return doc;
    }),
  );

  app.put<{ Params: LocalParams }>('/:db/_local/:id', async (request, reply) => {
    const { id } = request.params;
    const doc = storeDocument(objectBody(request.body, `PUT /${request.params.db}/_local/${id}`), 'the local document');
    if (doc._id !== undefined && doc._id !== LOCAL_ID_PREFIX + id) throw badRequest(`the document's _id ${JSON.stringify(doc._id)} is not the id of its URL (${JSON.stringify(LOCAL_ID_PREFIX + id)})`);
    const rev = revOfWrite(doc, stringParam(request.query as Query, 'rev'), 'the local document');
    const { _revisions: _, ...rest } = doc;
    return ctx.withDatabase(request.params.db, async (db) => {
      if (deletedOf(doc, 'the local document')) {
        if (rev === undefined) throw new CouchError(409, 'conflict', `Document update conflict: deleting ${JSON.stringify(LOCAL_ID_PREFIX + id)} needs its _rev`);
        if (!(await db.store.removeLocal(id, rev))) throw notFound('missing');
        return reply.code(201).send({ ok: true, id: LOCAL_ID_PREFIX + id, rev: '0-0' });
      }
      const result = await db.store.putLocal(id, bodyOf(rest), rev === undefined ? undefined : { rev });
      return reply.code(201).send({ ok: true, ...result });
    });
  });

  app.delete<{ Params: LocalParams }>('/:db/_local/:id', async (request) => {
    const rev = stringParam(request.query as Query, 'rev');
    const id = LOCAL_ID_PREFIX + request.params.id;
    if (rev === undefined) throw new CouchError(409, 'conflict', `Document update conflict: deleting ${JSON.stringify(id)} needs its rev (?rev=)`);
    return ctx.withDatabase(request.params.db, async (db) => {
      if (!(await db.store.removeLocal(request.params.id, rev))) throw notFound('missing');
      return { ok: true, id, rev: '0-0' };
    });
  });
}
