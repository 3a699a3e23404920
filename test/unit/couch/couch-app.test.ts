/**
 * The CouchDB endpoint's routes and error shapes on the in-memory catalog (DocumentStore over
 * InMemoryKeyValueTable; the cluster runs in test/integration/couch-*.test.ts): CouchDB's status
 * codes and `{ error, reason }` bodies, bad input refused by name with nothing written, and every
 * endpoint a replicator calls.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCouchApp } from '../../../couch/app';
import { MemoryCatalog } from '../../../couch/catalog';

let app: FastifyInstance;

interface Answer {
  status: number;
  body: unknown;
}

async function call(method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'HEAD', url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const r = await app.inject({ method, url, payload, headers: { ...(body !== undefined && !headers['content-type'] ? { 'content-type': 'application/json' } : {}), ...headers } });
  return { status: r.statusCode, body: r.body === '' ? undefined : JSON.parse(r.body) };
}

const err = (status: number, error: string, reason: string | RegExp) => ({ status, body: { error, reason: typeof reason === 'string' ? reason : expect.stringMatching(reason) } });

beforeEach(async () => {
  app = buildCouchApp({ catalog: new MemoryCatalog(), defaultPartitions: 4, maxBodyBytes: 64 * 1024, uuid: 'u1' }).app;
  expect(await call('PUT', '/db')).toEqual({ status: 201, body: { ok: true } });
});
afterEach(async () => {
  await app.close();
});

describe('the CouchDB endpoint: server and databases', () => {
  it('welcomes with its uuid and lists its databases', async () => {
    expect(await call('GET', '/')).toEqual({ status: 200, body: { couchdb: 'Welcome', version: '3.3.3', uuid: 'u1', vendor: { name: 'kvt' }, features: [] } });
    expect(await call('GET', '/_up')).toEqual({ status: 200, body: { status: 'ok' } });
    await call('PUT', '/another?q=2');
    expect(await call('GET', '/_all_dbs')).toEqual({ status: 200, body: ['another', 'db'] });
    expect((await call('GET', '/_uuids?count=3')).body).toEqual({ uuids: [expect.stringMatching(/^[0-9a-f]{32}$/), expect.any(String), expect.any(String)] });
  });

  it('creates (412 when it exists), describes, and deletes (404 when missing) a database', async () => {
    expect(await call('PUT', '/db')).toEqual(err(412, 'file_exists', 'The database could not be created, the file already exists: db'));
    expect(await call('GET', '/db')).toEqual({
      status: 200,
      body: expect.objectContaining({ db_name: 'db', doc_count: 0, doc_del_count: 0, update_seq: expect.any(String), cluster: { q: 4, n: 1, w: 1, r: 1 } }),
    });
    expect(await call('DELETE', '/db')).toEqual({ status: 200, body: { ok: true } });
    expect(await call('DELETE', '/db')).toEqual(err(404, 'not_found', 'Database does not exist: db'));
    expect(await call('GET', '/db/doc')).toEqual(err(404, 'not_found', 'Database does not exist: db'));
    expect(await call('PUT', '/db?q=0')).toEqual(err(400, 'bad_request', 'query parameter q is "0"; it must be an integer from 1 to 1024'));
  });

  it('refuses database names kvt and CouchDB do not both take', async () => {
    for (const name of ['Upper', '1abc', 'has_underscore', 'dollar$']) {
      expect(await call('PUT', `/${name}`)).toEqual(err(400, 'illegal_database_name', new RegExp(`^Name: "${name.replace('$', '\\$')}"\\. Only lowercase letters`)));
    }
  });

  it('answers an unknown endpoint with a JSON 404', async () => {
    expect(await call('GET', '/db/_find')).toEqual(err(404, 'not_found', "kvt's CouchDB endpoint does not serve GET /db/_find"));
    expect(await call('GET', '/db/_design/ddoc/_view/v')).toEqual(err(404, 'not_found', "kvt's CouchDB endpoint does not serve GET /db/_design/ddoc/_view/v"));
    expect(await call('POST', '/_replicate', {})).toEqual(err(404, 'not_found', "kvt's CouchDB endpoint does not serve /_replicate"));
  });
});

describe('the CouchDB endpoint: documents', () => {
  it('creates, reads, updates and deletes a document with CouchDB status codes', async () => {
    const created = await call('PUT', '/db/fruit', { name: 'apple' });
    expect(created).toEqual({ status: 201, body: { ok: true, id: 'fruit', rev: expect.stringMatching(/^1-[0-9a-f]{32}$/) } });
    const rev1 = (created.body as { rev: string }).rev;
    expect(await call('GET', '/db/fruit')).toEqual({ status: 200, body: { _id: 'fruit', _rev: rev1, name: 'apple' } });
    expect(await call('PUT', '/db/fruit', { name: 'pear' })).toEqual(err(409, 'conflict', /^Document update conflict: /));
    const updated = await call('PUT', `/db/fruit?rev=${rev1}`, { name: 'pear' });
    const rev2 = (updated.body as { rev: string }).rev;
    expect(rev2).toMatch(/^2-/);
    expect(await call('PUT', '/db/fruit', { _rev: rev1, name: 'stale' })).toEqual(err(409, 'conflict', /^Document update conflict: /));
    expect((await call('GET', '/db/fruit?revs=true&revs_info=true')).body).toEqual({
      _id: 'fruit',
      _rev: rev2,
      name: 'pear',
      _revisions: { start: 2, ids: [rev2.slice(2), rev1.slice(2)] },
      _revs_info: [
        { rev: rev2, status: 'available' },
        { rev: rev1, status: 'missing' },
      ],
    });
    expect(await call('DELETE', '/db/fruit')).toEqual(err(409, 'conflict', /needs its rev/));
    const deleted = await call('DELETE', `/db/fruit?rev=${rev2}`);
    expect(deleted).toEqual({ status: 200, body: { ok: true, id: 'fruit', rev: expect.stringMatching(/^3-/) } });
    expect(await call('GET', '/db/fruit')).toEqual(err(404, 'not_found', 'deleted'));
    expect(await call('GET', '/db/nothing')).toEqual(err(404, 'not_found', 'missing'));
    expect((await call('GET', `/db/fruit?rev=${(deleted.body as { rev: string }).rev}`)).body).toEqual({ _id: 'fruit', _rev: (deleted.body as { rev: string }).rev, _deleted: true });
  });

  it('creates a document with POST, making its id, and keeps design documents and ids with slashes', async () => {
    const posted = await call('POST', '/db', { a: 1 });
    expect(posted).toEqual({ status: 201, body: { ok: true, id: expect.stringMatching(/^[0-9a-f]{32}$/), rev: expect.stringMatching(/^1-/) } });
    expect((await call('PUT', '/db/_design/app', { language: 'javascript' })).status).toBe(201);
    expect((await call('GET', '/db/_design/app')).body).toEqual(expect.objectContaining({ _id: '_design/app', language: 'javascript' }));
    expect((await call('PUT', '/db/a%2Fb%20c', { x: 1 })).body).toEqual(expect.objectContaining({ id: 'a/b c' }));
    expect((await call('GET', '/db/a%2Fb%20c')).body).toEqual(expect.objectContaining({ _id: 'a/b c', x: 1 }));
  });

  it('refuses bad input with 400 naming the field, and writes nothing', async () => {
    expect(await call('PUT', '/db/d', '{"a":')).toEqual(err(400, 'bad_request', /^the request body is not valid JSON: /));
    expect(await call('PUT', '/db/d', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toEqual(err(400, 'bad_request', 'the request body is not valid UTF-8'));
    expect(await call('PUT', '/db/d', [1, 2])).toEqual(err(400, 'bad_request', 'the body of PUT /db/d must be a JSON object, got an array'));
    expect(await call('PUT', '/db/d', { _rev: 'not-a-rev', a: 1 })).toEqual(
      err(400, 'bad_request', 'rev "not-a-rev" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)'),
    );
    expect(await call('PUT', '/db/d', { _foo: 1 })).toEqual(
      err(400, 'doc_validation', 'Bad special document member: _foo (in the document; members starting with "_" are CouchDB\'s: _id, _rev, _deleted, _revisions, _attachments)'),
    );
    expect(await call('PUT', '/db/d', { _id: 'other' })).toEqual(err(400, 'bad_request', 'the document\'s _id "other" is not the id of its URL ("d")'));
    expect(await call('PUT', '/db/d?rev=1-a', { _rev: '1-b' })).toEqual(err(400, 'bad_request', 'Document rev from request body and query string have different values ("1-b" and "1-a")'));
    expect(await call('PUT', '/db/d', { big: 'x'.repeat(70 * 1024) })).toEqual(err(413, 'too_large', 'the request body is over 65536 bytes, the largest this endpoint accepts (--max-body-bytes)'));
    expect(await call('GET', '/db/d?revs=yes')).toEqual(err(400, 'bad_request', 'query parameter revs must be true or false, got "yes"'));
    expect((await call('GET', '/db/_all_docs')).body).toEqual({ total_rows: 0, offset: 0, rows: [] });
  });

  it('refuses attachments with 415', async () => {
    expect(await call('PUT', '/db/d', { _attachments: { 'a.txt': { content_type: 'text/plain', data: 'aGk=' } } })).toEqual(
      err(415, 'attachments_unsupported', "the document has _attachments: kvt's CouchDB endpoint does not store attachments (documents with _attachments and attachment URLs are refused)"),
    );
    expect(await call('PUT', '/db/d/a.txt', 'hi', { 'content-type': 'text/plain' })).toEqual(err(415, 'attachments_unsupported', /^PUT \/db\/d\/a\.txt: /));
    expect(await call('GET', '/db/d/a.txt')).toEqual(err(415, 'attachments_unsupported', /^GET \/db\/d\/a\.txt: /));
    // An empty _attachments is no attachment.
    expect((await call('PUT', '/db/d', { _attachments: {}, a: 1 })).status).toBe(201);
  });
});

describe('the CouchDB endpoint: replication', () => {
  it('stores replicated revisions with _bulk_docs new_edits=false and reads them back with open_revs and _bulk_get', async () => {
    const docs = [
      { _id: 'x', _rev: '2-b', _revisions: { start: 2, ids: ['b', 'a'] }, v: 'b' },
      { _id: 'x', _rev: '2-c', _revisions: { start: 2, ids: ['c', 'a'] }, v: 'c' },
      { _id: 'y', _rev: '1-y', _deleted: true },
    ];
    expect(await call('POST', '/db/_bulk_docs', { docs, new_edits: false })).toEqual({ status: 201, body: [] });
    expect((await call('GET', '/db/x?conflicts=true')).body).toEqual({ _id: 'x', _rev: '2-c', v: 'c', _conflicts: ['2-b'] });
    expect((await call('GET', '/db/x?open_revs=all')).body).toEqual([{ ok: { _id: 'x', _rev: '2-c', v: 'c' } }, { ok: { _id: 'x', _rev: '2-b', v: 'b' } }]);
    expect((await call('GET', '/db/x?open_revs=["2-b","3-z"]&revs=true')).body).toEqual([{ ok: { _id: 'x', _rev: '2-b', v: 'b', _revisions: { start: 2, ids: ['b', 'a'] } } }, { missing: '3-z' }]);
    expect((await call('POST', '/db/_revs_diff', { x: ['2-b', '3-d'], z: ['1-z'] })).body).toEqual({ x: { missing: ['3-d'], possible_ancestors: ['2-b', '2-c'] }, z: { missing: ['1-z'] } });
    expect((await call('POST', '/db/_bulk_get?revs=true&latest=true', { docs: [{ id: 'x', rev: '1-a' }, { id: 'y', rev: '1-y' }, { id: 'z', rev: '1-z' }, { id: 'x' }] })).body).toEqual({
      results: [
        {
          id: 'x',
          docs: [{ ok: { _id: 'x', _rev: '2-c', v: 'c', _revisions: { start: 2, ids: ['c', 'a'] } } }, { ok: { _id: 'x', _rev: '2-b', v: 'b', _revisions: { start: 2, ids: ['b', 'a'] } } }],
        },
        { id: 'y', docs: [{ ok: { _id: 'y', _rev: '1-y', _deleted: true, _revisions: { start: 1, ids: ['y'] } } }] },
        { id: 'z', docs: [{ error: { id: 'z', rev: '1-z', error: 'not_found', reason: 'missing' } }] },
        { id: 'x', docs: [{ ok: { _id: 'x', _rev: '2-c', v: 'c', _revisions: { start: 2, ids: ['c', 'a'] } } }] },
      ],
    });
  });

  it('answers interactive _bulk_docs per document, and refuses a bulk with one bad document whole', async () => {
    const first = await call('POST', '/db/_bulk_docs', { docs: [{ _id: 'a', v: 1 }, { v: 2 }] });
    expect(first).toEqual({
      status: 201,
      body: [
        { ok: true, id: 'a', rev: expect.stringMatching(/^1-/) },
        { ok: true, id: expect.stringMatching(/^[0-9a-f]{32}$/), rev: expect.stringMatching(/^1-/) },
      ],
    });
    expect(
      (
        await call('POST', '/db/_bulk_docs', {
          docs: [
            { _id: 'a', v: 3 },
            { _id: 'b', v: 4 },
          ],
        })
      ).body,
    ).toEqual([
      { id: 'a', error: 'conflict', reason: expect.stringMatching(/^Document update conflict: /) },
      { ok: true, id: 'b', rev: expect.stringMatching(/^1-/) },
    ]);
    const before = (await call('GET', '/db/_all_docs')).body;
    expect(
      await call('POST', '/db/_bulk_docs', {
        docs: [
          { _id: 'c', v: 5 },
          { _id: 'd', _oops: 1 },
        ],
      }),
    ).toEqual(err(400, 'doc_validation', /^Bad special document member: _oops \(in docs\[1\]/));
    expect(
      await call('POST', '/db/_bulk_docs', {
        docs: [
          { _id: 'c', _rev: '1-x' },
          { _id: 'd', _rev: 'bad' },
        ],
        new_edits: false,
      }),
    ).toEqual(err(400, 'bad_request', 'docs[1]._rev "bad" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)'));
    expect(await call('POST', '/db/_bulk_docs', { docs: 'no' })).toEqual(err(400, 'bad_request', 'the body of _bulk_docs must have "docs", an array; got string'));
    expect(await call('POST', '/db/_bulk_docs', { docs: [], new_edits: 'no' })).toEqual(err(400, 'bad_request', 'new_edits must be true or false, got string'));
    expect((await call('GET', '/db/_all_docs')).body).toEqual(before);
  });

  it('keeps replication checkpoints in _local documents with CouchDB revs', async () => {
    expect(await call('GET', '/db/_local/cp')).toEqual(err(404, 'not_found', 'missing'));
    expect(await call('PUT', '/db/_local/cp', { _id: '_local/cp', last_seq: 's1' })).toEqual({ status: 201, body: { ok: true, id: '_local/cp', rev: '0-1' } });
    expect(await call('PUT', '/db/_local/cp', { _id: '_local/cp', last_seq: 's2' })).toEqual(err(409, 'conflict', /it exists; give its _rev/));
    expect(await call('PUT', '/db/_local/cp', { _id: '_local/cp', _rev: '0-1', last_seq: 's2' })).toEqual({ status: 201, body: { ok: true, id: '_local/cp', rev: '0-2' } });
    expect((await call('GET', '/db/_local/cp')).body).toEqual({ _id: '_local/cp', _rev: '0-2', last_seq: 's2' });
    expect(await call('PUT', '/db/_local/cp', { _rev: 'x' })).toEqual(err(400, 'bad_request', 'rev "x" is not a local document rev; expected "0-<n>" (n 1 to 4294967295)'));
    expect(await call('DELETE', '/db/_local/cp?rev=0-1')).toEqual(err(409, 'conflict', /it is at rev 0-2, not 0-1/));
    expect(await call('DELETE', '/db/_local/cp?rev=0-2')).toEqual({ status: 200, body: { ok: true, id: '_local/cp', rev: '0-0' } });
    expect(await call('DELETE', '/db/_local/cp?rev=0-2')).toEqual(err(404, 'not_found', 'missing'));
    expect((await call('GET', '/db/_changes')).body).toEqual({ results: [], last_seq: expect.any(String) });
  });

  it('lists documents with _all_docs: ranges, keys, include_docs and conflicts', async () => {
    for (const id of ['a', 'b', 'c', 'd']) await call('PUT', `/db/${id}`, { id });
    const b = (await call('GET', '/db/b')).body as { _rev: string };
    await call('DELETE', `/db/b?rev=${b._rev}`);
    await call('POST', '/db/_bulk_docs', { docs: [{ _id: 'c', _rev: '1-zzz', v: 'conflict' }], new_edits: false });
    const ids = async (url: string) => ((await call('GET', url)).body as { rows: { id: string }[] }).rows.map((r) => r.id);
    expect(await ids('/db/_all_docs')).toEqual(['a', 'c', 'd']);
    expect(await ids('/db/_all_docs?startkey="b"&endkey="c"')).toEqual(['c']);
    expect(await ids('/db/_all_docs?descending=true&limit=2')).toEqual(['d', 'c']);
    expect(await ids('/db/_all_docs?key="d"')).toEqual(['d']);
    const all = (await call('GET', '/db/_all_docs?include_docs=true&conflicts=true&skip=1&limit=1')).body;
    expect(all).toEqual({
      total_rows: 3,
      offset: 1,
      rows: [{ id: 'c', key: 'c', value: { rev: '1-zzz' }, doc: { _id: 'c', _rev: '1-zzz', v: 'conflict', _conflicts: [expect.stringMatching(/^1-/)] } }],
    });
    expect((await call('POST', '/db/_all_docs', { keys: ['b', 'x', 'a'] })).body).toEqual({
      total_rows: 3,
      offset: 0,
      rows: [
        { id: 'b', key: 'b', value: { rev: expect.stringMatching(/^2-/), deleted: true } },
        { key: 'x', error: 'not_found' },
        { id: 'a', key: 'a', value: { rev: expect.stringMatching(/^1-/) } },
      ],
    });
    expect(await call('GET', '/db/_all_docs?startkey=b')).toEqual(err(400, 'bad_request', 'query parameter startkey must be JSON (a key is a JSON string: startkey="abc"), got "b"'));
    expect(await call('GET', '/db/_all_docs?startkey="c"&endkey="a"')).toEqual(err(400, 'bad_request', 'endKey sorts before startKey: no document can match (swap them, or change descending)'));
  });
});

describe('the CouchDB endpoint: the changes feed', () => {
  it('lists changes with style=all_docs, since, limit and include_docs', async () => {
    await call('POST', '/db/_bulk_docs', {
      docs: [
        { _id: 'x', _rev: '1-a' },
        { _id: 'x', _rev: '1-b', _deleted: true },
        { _id: 'y', _rev: '1-y', v: 1 },
      ],
      new_edits: false,
    });
    const all = (await call('GET', '/db/_changes?style=all_docs&since=0')).body as { results: unknown[]; last_seq: string };
    expect(all.results).toEqual([
      { seq: expect.any(String), id: 'x', changes: [{ rev: '1-a' }, { rev: '1-b' }] },
      { seq: expect.any(String), id: 'y', changes: [{ rev: '1-y' }] },
    ]);
    const limited = (await call('GET', '/db/_changes?limit=1&include_docs=true')).body as { results: { seq: string }[]; last_seq: string };
    expect(limited.results).toEqual([{ seq: expect.any(String), id: 'x', changes: [{ rev: '1-a' }], doc: { _id: 'x', _rev: '1-a' } }]);
    expect(((await call('GET', `/db/_changes?since=${limited.last_seq}`)).body as { results: { id: string }[] }).results.map((r) => r.id)).toEqual(['y']);
    expect((await call('GET', '/db/_changes?since=now')).body).toEqual({ results: [], last_seq: expect.any(String) });
    await call('PUT', '/db/y', { _rev: '1-y', v: 2, _deleted: true });
    expect(((await call('GET', `/db/_changes?since=${all.last_seq}`)).body as { results: unknown[] }).results).toEqual([
      { seq: expect.any(String), id: 'y', changes: [{ rev: expect.stringMatching(/^2-/) }], deleted: true },
    ]);
  });

  it('waits in feed=longpoll until a change, writing heartbeats meanwhile', async () => {
    const { last_seq } = (await call('GET', '/db/_changes')).body as { last_seq: string };
    const waiting = app.inject({ method: 'GET', url: `/db/_changes?feed=longpoll&heartbeat=100&since=${last_seq}` });
    await new Promise((r) => setTimeout(r, 450));
    await call('PUT', '/db/late', { v: 1 });
    const answer = await waiting;
    expect(answer.statusCode).toBe(200);
    expect(answer.body.startsWith('\n')).toBe(true);
    expect(JSON.parse(answer.body).results).toEqual([{ seq: expect.any(String), id: 'late', changes: [{ rev: expect.stringMatching(/^1-/) }] }]);
    const timedOut = await call('GET', `/db/_changes?feed=longpoll&timeout=100&since=${JSON.parse(answer.body).last_seq}`);
    expect(timedOut).toEqual({ status: 200, body: { results: [], last_seq: expect.any(String) } });
  });

  it('refuses what it does not serve, and bad sequences, with 400', async () => {
    expect(await call('GET', '/db/_changes?feed=continuous')).toEqual(err(400, 'bad_request', 'feed=continuous is not supported by this endpoint; use feed=normal or feed=longpoll'));
    expect(await call('GET', '/db/_changes?filter=_doc_ids')).toEqual(err(400, 'bad_request', "filter is not supported by this endpoint's changes feed"));
    expect(await call('GET', '/db/_changes?since=garbage')).toEqual(err(400, 'bad_request', 'since is not a sequence of this changes feed: malformed'));
    expect(await call('GET', '/db/_changes?style=winners')).toEqual(err(400, 'bad_request', 'style must be main_only or all_docs, got "winners"'));
  });
});
