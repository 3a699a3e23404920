/**
 * The CouchDB endpoint's changes feed beyond the main paths (couch-app.test.ts): options taken as
 * CouchDB takes them (`limit=0`, `heartbeat=true`, a timeout over the store's longest wait), the ones
 * it refuses (`descending`), and longpoll waits that end when the endpoint stops or the caller hangs up.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../controller/controller-parts';
import { couchError, CouchTestApp } from './couch-test-app';

let couch: CouchTestApp;

beforeEach(async () => {
  couch = new CouchTestApp();
  expect((await couch.call('PUT', '/db')).status).toBe(201);
  for (const id of ['a', 'b']) await couch.call('PUT', `/db/${id}`, { id });
});
afterEach(async () => {
  await couch.close();
});

/** The ids of the results of a `_changes` answer. */
const changedIds = (url: string): Promise<string[]> => couch.listedIds(url);

describe('the CouchDB endpoint: _changes options', () => {
  it('refuses descending=true with 400, and takes descending=false', async () => {
    expect(await couch.answer('GET', '/db/_changes?descending=true')).toEqual(couchError(400, 'bad_request', "descending is not supported by this endpoint's changes feed"));
    expect(await changedIds('/db/_changes?descending=false')).toEqual(['a', 'b']);
  });

  it('answers limit=0 with one result, as CouchDB does', async () => {
    expect(await changedIds('/db/_changes?limit=0')).toEqual(['a']);
  });

  it('takes heartbeat=true and a longpoll timeout over ten minutes, answering at once when there are changes', async () => {
    expect(await changedIds('/db/_changes?feed=longpoll&heartbeat=true')).toEqual(['a', 'b']);
    expect(await changedIds('/db/_changes?feed=longpoll&timeout=3600000')).toEqual(['a', 'b']);
    expect(await couch.answer('GET', '/db/_changes?feed=longpoll&heartbeat=0')).toEqual(couchError(400, 'bad_request', 'query parameter heartbeat is "0"; it must be an integer from 1 to 600000'));
  });
});

describe('the CouchDB endpoint: longpoll waits', () => {
  it('answers a waiting longpoll at once, with no results, when the endpoint stops', async () => {
    const { last_seq } = (await couch.call('GET', '/db/_changes')).body as { last_seq: string };
    let answer: { statusCode: number; body: string } | undefined;
    const waiting = couch.app.inject({ method: 'GET', url: `/db/_changes?feed=longpoll&timeout=600000&since=${last_seq}` }).then((r) => (answer = r));
    await eventually('the longpoll waits', () => couch.context.waits.size === 1);
    couch.context.abortWaits();
    await eventually('the longpoll answers', () => answer !== undefined);
    await waiting;
    expect([answer!.statusCode, JSON.parse(answer!.body)]).toEqual([200, { results: [], last_seq: expect.any(String) }]);
    expect(couch.context.waits.size).toBe(0);
  });

  it('ends the wait of a caller who hangs up', async () => {
    await couch.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = couch.app.server.address() as AddressInfo;
    const request = http.get({ host: '127.0.0.1', port, path: '/db/_changes?feed=longpoll&timeout=600000&since=now' });
    request.on('error', () => undefined);
    await eventually('the longpoll waits', () => couch.context.waits.size === 1);
    request.destroy();
    await eventually('the wait ends', () => couch.context.waits.size === 0);
  });
});
