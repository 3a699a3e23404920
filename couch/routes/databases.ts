/**
 * `PUT /{db}` (a new key-value table of the scope; `?q=` its partition count), `GET /{db}` (counts and
 * the update sequence), `DELETE /{db}`, and `POST /{db}` (a new document, its id made when absent).
 */
import type { FastifyInstance } from 'fastify';
import { checkDatabaseName } from '../catalog';
import type { CouchContext } from '../context';
import { newDocumentId, storeDocument } from '../documents';
import { CouchError, noDatabase } from '../errors';
import { intParam, objectBody, Query } from '../query';
import { writeDocument } from './documents';

type DbParams = { db: string };

export function databaseRoutes(app: FastifyInstance, ctx: CouchContext): void {
  app.put<{ Params: DbParams }>('/:db', { config: { access: 'admin' } }, async (request, reply) => {
    const name = checkDatabaseName(request.params.db);
    const q = intParam(request.query as Query, 'q', 1, 1024) ?? ctx.defaultPartitions;
    if (!(await ctx.catalog.create(name, q))) throw new CouchError(412, 'file_exists', `The database could not be created, the file already exists: ${name}`);
    // The first count of a table writes its count summaries, after reading its id entries once: cheap
    // now that it is empty (docs/documents.md, Counts). Best effort: a later GET /{db} does it anyway.
    await ctx.catalog
      .open(name)
      .then((db) => db.store.info())
      .catch(() => undefined);
    return reply.code(201).send({ ok: true });
  });

  app.delete<{ Params: DbParams }>('/:db', { config: { access: 'admin' } }, async (request) => {
    const name = checkDatabaseName(request.params.db);
    if (!(await ctx.catalog.remove(name))) throw noDatabase(name);
    return { ok: true };
  });

  app.get<{ Params: DbParams }>('/:db', async (request) =>
    ctx.withDatabase(request.params.db, async (db) => {
      const info = await db.store.info();
      return {
        db_name: db.name,
        doc_count: info.documents,
        doc_del_count: info.deletedDocuments,
        update_seq: info.updateSeq,
        purge_seq: 0,
        compact_running: false,
        disk_format_version: 8,
        instance_start_time: '0',
        props: {},
        sizes: { active: 0, external: 0, file: 0 },
        cluster: { q: db.partitionCount, n: 1, w: 1, r: 1 },
      };
    }),
  );

  app.post<{ Params: DbParams }>('/:db', async (request, reply) =>
    ctx.withDatabase(request.params.db, async (db) => {
      const doc = storeDocument(objectBody(request.body, `POST /${db.name}`), 'the document');
      if (doc._id === undefined) doc._id = newDocumentId();
      const result = await writeDocument(db.store, doc, undefined, 'the document');
      return reply.code(201).send({ ok: true, ...result });
    }),
  );
}
