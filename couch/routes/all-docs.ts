/**
 * `GET|POST /{db}/_all_docs`: the documents by id (`startkey`/`endkey`, `key`, `keys`, `descending`,
 * `inclusive_end`, `skip`, `limit`, `include_docs`, `conflicts`, `update_seq`). `total_rows` counts the
 * database's documents (a scan of its feed, as `GET /{db}` does); `offset` is the `skip` given.
 */
import type { FastifyInstance } from 'fastify';
import type { AllDocsOptions, AllDocsRow } from '../../client';
import type { CouchContext } from '../context';
import { kindOf } from '../documents';
import { badRequest } from '../errors';
import { boolParam, intParam, jsonParam, keyParam, objectBody, Query } from '../query';

type DbParams = { db: string };

/** The options of a listing from its query (and, for POST, its body's `keys`). */
function allDocsOptions(q: Query, body: unknown): AllDocsOptions {
  const o: AllDocsOptions = {
    descending: boolParam(q, 'descending') ?? false,
    inclusiveEnd: boolParam(q, 'inclusive_end') ?? true,
    includeDocs: boolParam(q, 'include_docs') ?? false,
    conflicts: boolParam(q, 'conflicts') ?? false,
    skip: intParam(q, 'skip', 0, Number.MAX_SAFE_INTEGER) ?? 0,
  };
  const limit = intParam(q, 'limit', 0, Number.MAX_SAFE_INTEGER);
  if (limit !== undefined) o.limit = Math.min(limit, 100_000);
  const keys = body !== undefined ? objectBody(body, '_all_docs').keys : jsonParam(q, 'keys');
  const key = keyParam(q, 'key');
  if (keys !== undefined) {
    if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) throw badRequest(`keys must be a JSON array of document ids (strings), got ${kindOf(keys)}`);
    o.keys = keys as string[];
  } else if (key !== undefined) {
    [o.startKey, o.endKey, o.inclusiveEnd] = [key, key, true];
  } else {
    o.startKey = keyParam(q, 'startkey', 'start_key');
    o.endKey = keyParam(q, 'endkey', 'end_key');
  }
  return o;
}

/** A row as CouchDB writes it. */
function rowOf(r: AllDocsRow, includeDocs: boolean): Record<string, unknown> {
  if (r.rev === null) return { key: r.id, error: 'not_found' };
  const row: Record<string, unknown> = { id: r.id, key: r.id, value: r.deleted ? { rev: r.rev, deleted: true } : { rev: r.rev } };
  if (includeDocs) row.doc = r.doc ?? null;
  return row;
}

export function allDocsRoutes(app: FastifyInstance, ctx: CouchContext): void {
  const handler = async (request: { params: DbParams; query: unknown; body?: unknown }) => {
    const q = request.query as Query;
    const o = allDocsOptions(q, request.body);
    const updateSeq = boolParam(q, 'update_seq') ?? false;
    return ctx.withDatabase(request.params.db, async (db) => {
      const [listing, info] = await Promise.all([db.store.allDocs(o), db.store.info()]);
      return {
        total_rows: info.documents,
        offset: o.skip,
        rows: listing.rows.map((r) => rowOf(r, o.includeDocs === true)),
        ...(updateSeq ? { update_seq: info.updateSeq } : {}),
      };
    });
  };
  app.get<{ Params: DbParams }>('/:db/_all_docs', async (request) => handler({ params: request.params, query: request.query }));
  app.post<{ Params: DbParams }>('/:db/_all_docs', async (request) => handler({ params: request.params, query: request.query, body: request.body ?? {} }));
}
