/**
 * The CouchDB endpoint's input checks and answers beyond the main paths (couch-app.test.ts): query
 * parameters refused by name (given twice, a bad boolean, an integer out of range or not written as
 * one), database names and databases created after a miss, `_all_docs` options as CouchDB takes them,
 * ETags, members CouchDB ignores, and `_local` deletions that must name their rev.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { couchError, CouchTestApp } from './couch-test-app';

let couch: CouchTestApp;

beforeEach(async () => {
  couch = new CouchTestApp();
  expect(await couch.answer('PUT', '/db')).toEqual({ status: 201, body: { ok: true } });
});
afterEach(async () => {
  await couch.close();
});

/** The ids of the rows of an `_all_docs` answer. */
const ids = (url: string): Promise<string[]> => couch.listedIds(url);

describe('the CouchDB endpoint: query parameters', () => {
  it('refuses a parameter given twice, naming it', async () => {
    expect(await couch.answer('GET', '/db/_all_docs?limit=1&limit=2')).toEqual(couchError(400, 'bad_request', 'query parameter limit is given 2 times; give it once'));
  });

  it('takes false for a boolean as CouchDB does', async () => {
    await couch.call('PUT', '/db/a', { v: 1 });
    expect((await couch.call('GET', '/db/_all_docs?include_docs=false&descending=false')).body).toEqual({
      total_rows: 1,
      offset: 0,
      rows: [{ id: 'a', key: 'a', value: { rev: expect.stringMatching(/^1-/) } }],
    });
  });

  it('refuses integers above their maximum, naming the range', async () => {
    expect(await couch.answer('PUT', '/big?q=1025')).toEqual(couchError(400, 'bad_request', 'query parameter q is "1025"; it must be an integer from 1 to 1024'));
    expect(await couch.answer('GET', '/_uuids?count=1001')).toEqual(couchError(400, 'bad_request', 'query parameter count is "1001"; it must be an integer from 1 to 1000'));
    expect(await couch.answer('GET', '/_all_dbs')).toEqual({ status: 200, body: ['db'] });
  });

  it('refuses integers not written as integers', async () => {
    for (const [param, given] of [
      ['limit', '1.5'],
      ['limit', ''],
      ['skip', '1e1'],
      ['skip', '0x1'],
    ]) {
      expect(await couch.answer('GET', `/db/_all_docs?${param}=${given}`)).toEqual(
        couchError(400, 'bad_request', `query parameter ${param} is "${given}"; it must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`),
      );
    }
  });
});

describe('the CouchDB endpoint: databases', () => {
  it('takes names of up to 250 characters', async () => {
    const longest = `a${'b'.repeat(249)}`;
    expect(await couch.answer('PUT', `/${longest}`)).toEqual({ status: 201, body: { ok: true } });
    expect(await couch.answer('PUT', `/${longest}c`)).toEqual(couchError(400, 'illegal_database_name', /^Name: "ab+c"\. Only lowercase letters .* 1 to 250 of them/));
    expect(await couch.answer('GET', '/_all_dbs')).toEqual({ status: 200, body: [longest, 'db'] });
  });

  it('serves a database created after a request found it missing', async () => {
    expect(await couch.answer('GET', '/later')).toEqual(couchError(404, 'not_found', 'Database does not exist: later'));
    expect(await couch.answer('PUT', '/later')).toEqual({ status: 201, body: { ok: true } });
    expect(await couch.answer('GET', '/later')).toEqual({ status: 200, body: expect.objectContaining({ db_name: 'later', doc_count: 0 }) });
    expect((await couch.call('PUT', '/later/d', { v: 1 })).status).toBe(201);
  });

  it('counts live and deleted documents apart', async () => {
    for (const id of ['a', 'c']) await couch.call('PUT', `/db/${id}`, { id });
    const { rev } = (await couch.call('PUT', '/db/b', { id: 'b' })).body as { rev: string };
    expect((await couch.call('DELETE', `/db/b?rev=${rev}`)).status).toBe(200);
    expect((await couch.call('GET', '/db')).body).toEqual(expect.objectContaining({ doc_count: 2, doc_del_count: 1 }));
  });

  it('keeps the _id a POST gives', async () => {
    expect(await couch.answer('POST', '/db', { _id: 'mine', v: 1 })).toEqual({ status: 201, body: { ok: true, id: 'mine', rev: expect.stringMatching(/^1-/) } });
    expect((await couch.call('GET', '/db/mine')).body).toEqual(expect.objectContaining({ _id: 'mine', v: 1 }));
  });
});

describe('the CouchDB endpoint: _all_docs', () => {
  beforeEach(async () => {
    for (const id of ['a', 'b', 'c', 'd']) await couch.call('PUT', `/db/${id}`, { id });
  });

  it('finds key= even with inclusive_end=false', async () => {
    expect(await ids('/db/_all_docs?key="c"&inclusive_end=false')).toEqual(['c']);
    expect(await ids('/db/_all_docs?startkey="b"&endkey="d"&inclusive_end=false')).toEqual(['b', 'c']);
  });

  it('takes keys= in the query of a GET, in their order', async () => {
    expect(await ids('/db/_all_docs?keys=["d","a"]')).toEqual(['d', 'a']);
  });

  it('refuses keys that are not document ids, naming the parameter', async () => {
    const refused = couchError(400, 'bad_request', 'keys must be a JSON array of document ids (strings), got an array');
    expect(await couch.answer('POST', '/db/_all_docs', { keys: ['a', 1] })).toEqual(refused);
    expect(await couch.answer('GET', '/db/_all_docs?keys=[null]')).toEqual(refused);
    expect(await couch.answer('GET', '/db/_all_docs?keys="a"')).toEqual(couchError(400, 'bad_request', 'keys must be a JSON array of document ids (strings), got string'));
  });

  it('takes start_key and end_key as startkey and endkey', async () => {
    expect(await ids('/db/_all_docs?start_key="b"&end_key="c"')).toEqual(['b', 'c']);
  });

  it('caps a limit above 100,000 rather than refusing it', async () => {
    expect(await ids('/db/_all_docs?limit=1000000')).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('the CouchDB endpoint: documents', () => {
  it("sends a document's rev as its ETag", async () => {
    const put = await couch.call('PUT', '/db/d', { v: 1 });
    const { rev } = put.body as { rev: string };
    expect(put.headers.etag).toBe(`"${rev}"`);
    const got = await couch.call('GET', '/db/d');
    expect([got.status, got.headers.etag]).toEqual([200, `"${rev}"`]);
  });

  it('refuses open_revs that is neither "all" nor an array of revs', async () => {
    await couch.call('PUT', '/db/d', { v: 1 });
    expect(await couch.answer('GET', '/db/d?open_revs=[1]')).toEqual(couchError(400, 'bad_request', 'query parameter open_revs must be "all" or a JSON array of revs, got an array'));
    expect(await couch.answer('GET', '/db/d?open_revs="1-a"')).toEqual(couchError(400, 'bad_request', 'query parameter open_revs must be "all" or a JSON array of revs, got string'));
  });

  it('drops the members CouchDB ignores on a write', async () => {
    const put = await couch.call('PUT', '/db/d', { _conflicts: ['1-x'], _deleted_conflicts: [], _revs_info: [], _local_seq: 7, v: 1 });
    expect(put.status).toBe(201);
    expect((await couch.call('GET', '/db/d')).body).toEqual({ _id: 'd', _rev: (put.body as { rev: string }).rev, v: 1 });
  });

  it('refuses a _deleted that is not a boolean, and keeps the document', async () => {
    const { rev } = (await couch.call('PUT', '/db/d', { v: 1 })).body as { rev: string };
    expect(await couch.answer('PUT', '/db/d', { _rev: rev, _deleted: 'yes' })).toEqual(couchError(400, 'bad_request', 'the document._deleted must be true or false, got string'));
    await couch.call('PUT', '/db/_local/cp', { last_seq: 's1' });
    expect(await couch.answer('PUT', '/db/_local/cp', { _rev: '0-1', _deleted: 'yes' })).toEqual(couchError(400, 'bad_request', 'the local document._deleted must be true or false, got string'));
    expect((await couch.call('GET', '/db/_local/cp')).body).toEqual({ _id: '_local/cp', _rev: '0-1', last_seq: 's1' });
    expect((await couch.call('GET', '/db/d')).body).toEqual({ _id: 'd', _rev: rev, v: 1 });
  });

  it('answers DELETE of a local document without ?rev= with 409, and keeps it', async () => {
    await couch.call('PUT', '/db/_local/cp', { last_seq: 's1' });
    expect(await couch.answer('DELETE', '/db/_local/cp')).toEqual(couchError(409, 'conflict', 'Document update conflict: deleting "_local/cp" needs its rev (?rev=)'));
    expect((await couch.call('GET', '/db/_local/cp')).body).toEqual({ _id: '_local/cp', _rev: '0-1', last_seq: 's1' });
  });
});
