/**
 * What a replicator relies on from the endpoint besides the happy path (couch-app.test.ts): a bad
 * item of `_bulk_get` failing alone while an unreachable store fails the request (503, so that the
 * replicator retries rather than skips), replicated writes never given made-up ids, `PUT` with
 * `new_edits=false`, checkpoints in `_local` kept to their own id and deleted by `PUT`, and
 * `include_docs` giving a deletion its tombstone.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyValueTable, UnavailableError } from '../../../client';
import { buildCouchApp } from '../../../couch/app';
import { MemoryCatalog } from '../../../couch/catalog';

type BytesTable = KeyValueTable<Uint8Array, Uint8Array>;

/** The in-memory catalog, whose tables answer every point read with UnavailableError while `down`. */
class FlakyCatalog extends MemoryCatalog {
  down = false;

  protected override async openTable(name: string): Promise<{ table: BytesTable; partitionCount: number }> {
    const { table, partitionCount } = await super.openTable(name);
    const failing = new Proxy(table, {
      get: (t, prop) => {
        if (this.down && (prop === 'get' || prop === 'getAll')) return () => Promise.reject(new UnavailableError('injected: the segment store is down'));
        const v = (t as unknown as Record<string | symbol, unknown>)[prop];
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
    return { table: failing, partitionCount };
  }
}

let catalog: FlakyCatalog;
let app: FastifyInstance;

async function call(method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const r = await app.inject({ method, url, ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
  return { status: r.statusCode, body: r.body === '' ? undefined : JSON.parse(r.body) };
}

const err = (status: number, error: string, reason: string | RegExp) => ({ status, body: { error, reason: typeof reason === 'string' ? reason : expect.stringMatching(reason) } });

beforeEach(async () => {
  catalog = new FlakyCatalog();
  app = buildCouchApp({ catalog, defaultPartitions: 4, maxBodyBytes: 64 * 1024, uuid: 'u1' }).app;
  expect((await call('PUT', '/db')).status).toBe(201);
});
afterEach(async () => {
  await app.close();
});

describe('the CouchDB endpoint: _bulk_get', () => {
  it('fails a bad rev in its own item and answers the others', async () => {
    await call('POST', '/db/_bulk_docs', { docs: [{ _id: 'x', _rev: '1-a', v: 1 }], new_edits: false });
    expect(
      await call('POST', '/db/_bulk_get', {
        docs: [
          { id: 'x', rev: 'bad' },
          { id: 'x', rev: '1-a' },
        ],
      }),
    ).toEqual({
      status: 200,
      body: {
        results: [
          {
            id: 'x',
            docs: [{ error: { id: 'x', rev: 'bad', error: 'bad_request', reason: 'revs[0] "bad" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)' } }],
          },
          { id: 'x', docs: [{ ok: { _id: 'x', _rev: '1-a', v: 1 } }] },
        ],
      },
    });
  });

  it('answers 503 when the store is unreachable, rather than items a replicator would skip', async () => {
    await call('POST', '/db/_bulk_docs', { docs: [{ _id: 'x', _rev: '1-a', v: 1 }], new_edits: false });
    catalog.down = true;
    expect(await call('POST', '/db/_bulk_get', { docs: [{ id: 'x', rev: '1-a' }, { id: 'x' }] })).toEqual(err(503, 'service_unavailable', 'injected: the segment store is down'));
    expect(await call('GET', '/db/x')).toEqual(err(503, 'service_unavailable', 'injected: the segment store is down'));
    catalog.down = false;
    expect((await call('POST', '/db/_bulk_get', { docs: [{ id: 'x', rev: '1-a' }] })).body).toEqual({ results: [{ id: 'x', docs: [{ ok: { _id: 'x', _rev: '1-a', v: 1 } }] }] });
  });
});

describe('the CouchDB endpoint: replicated writes', () => {
  it('refuses a replicated document without _id instead of making one up, writing nothing', async () => {
    expect(
      await call('POST', '/db/_bulk_docs', {
        docs: [
          { _id: 'ok', _rev: '1-a' },
          { _rev: '1-b', v: 1 },
        ],
        new_edits: false,
      }),
    ).toEqual(err(400, 'bad_request', 'docs[1]._id must be a non-empty string, got undefined'));
    expect((await call('GET', '/db/_all_docs')).body).toEqual({ total_rows: 0, offset: 0, rows: [] });
  });

  it('stores PUT ?new_edits=false as a replicated branch, not as an edit of its _rev', async () => {
    const first = (await call('PUT', '/db/x', { v: 'local' })).body as { rev: string };
    expect(await call('PUT', '/db/x?new_edits=false', { _rev: '1-zzz', v: 'replicated' })).toEqual({ status: 201, body: { ok: true, id: 'x', rev: '1-zzz' } });
    expect((await call('GET', '/db/x?conflicts=true')).body).toEqual({ _id: 'x', _rev: '1-zzz', v: 'replicated', _conflicts: [first.rev] });
    // The same revision again changes nothing.
    expect((await call('PUT', '/db/x?new_edits=false', { _rev: '1-zzz', v: 'replicated' })).status).toBe(201);
    expect((await call('GET', '/db/x?open_revs=all')).body).toHaveLength(2);
  });
});

describe('the CouchDB endpoint: _local checkpoints', () => {
  it("refuses a body whose _id is another document's, writing nothing", async () => {
    expect(await call('PUT', '/db/_local/a', { _id: '_local/b', last_seq: 's' })).toEqual(err(400, 'bad_request', 'the document\'s _id "_local/b" is not the id of its URL ("_local/a")'));
    expect(await call('GET', '/db/_local/a')).toEqual(err(404, 'not_found', 'missing'));
    expect(await call('GET', '/db/_local/b')).toEqual(err(404, 'not_found', 'missing'));
  });

  it('removes a checkpoint on a PUT with _deleted: true, at its rev only', async () => {
    await call('PUT', '/db/_local/cp', { last_seq: 's1' });
    expect(await call('PUT', '/db/_local/cp', { _deleted: true })).toEqual(err(409, 'conflict', 'Document update conflict: deleting "_local/cp" needs its _rev'));
    expect(await call('PUT', '/db/_local/cp', { _rev: '0-2', _deleted: true })).toEqual(err(409, 'conflict', /it is at rev 0-1, not 0-2/));
    expect(await call('PUT', '/db/_local/cp', { _rev: '0-1', _deleted: true })).toEqual({ status: 201, body: { ok: true, id: '_local/cp', rev: '0-0' } });
    expect(await call('GET', '/db/_local/cp')).toEqual(err(404, 'not_found', 'missing'));
    expect(await call('PUT', '/db/_local/cp', { _rev: '0-1', _deleted: true })).toEqual(err(404, 'not_found', 'missing'));
  });
});

describe('the CouchDB endpoint: _changes with include_docs', () => {
  it("gives a deleted document's change its tombstone", async () => {
    const created = (await call('PUT', '/db/gone', { v: 1 })).body as { rev: string };
    const deleted = (await call('DELETE', `/db/gone?rev=${created.rev}`)).body as { rev: string };
    expect(((await call('GET', '/db/_changes?include_docs=true')).body as { results: unknown[] }).results).toEqual([
      { seq: expect.any(String), id: 'gone', changes: [{ rev: deleted.rev }], deleted: true, doc: { _id: 'gone', _rev: deleted.rev, _deleted: true } },
    ]);
  });
});
