/**
 * The CouchDB endpoint's tokens (bearer, or basic auth's password; the admin token for creating and
 * deleting databases) — checked through fastify and through a real PouchDB over HTTP on the in-memory
 * catalog — and its flags and `KVT_COUCH_*` variables.
 */
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PouchDB } from '../../../bench/couch/pouch';
import { buildCouchApp } from '../../../couch/app';
import { tokenOf } from '../../../couch/auth';
import { MemoryCatalog } from '../../../couch/catalog';
import { loadCouchConfig } from '../../../couch/config';
import { serverUuid } from '../../../couch/server';
import { tempDir } from '../../harness/process';

const DATA = 'data-token-1234';
const ADMIN = 'admin-token-5678';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('the CouchDB endpoint with tokens', () => {
  let app: FastifyInstance;
  let port: number;
  const dir = tempDir('kvt-couch-auth-');

  beforeAll(async () => {
    app = buildCouchApp({ catalog: new MemoryCatalog(), defaultPartitions: 2, maxBodyBytes: 1 << 20, uuid: 'u', tokens: { dataToken: DATA, adminToken: ADMIN } }).app;
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await app.close();
    dir.dispose();
  });

  const status = async (method: string, url: string, authorization?: string) => {
    const r = await app.inject({ method: method as 'GET', url, headers: authorization ? { authorization } : {} });
    return [r.statusCode, JSON.parse(r.body) as unknown];
  };

  it('answers 401 without a token or with a wrong one, 403 for the data token where the admin token is needed', async () => {
    expect(await status('GET', '/')).toEqual([200, expect.objectContaining({ couchdb: 'Welcome' })]);
    expect(await status('GET', '/_all_dbs')).toEqual([
      401,
      { error: 'unauthorized', reason: 'this endpoint needs a token: send "Authorization: Bearer <token>", or the token as the password of basic auth' },
    ]);
    expect(await status('GET', '/_all_dbs', 'Bearer nope')).toEqual([401, { error: 'unauthorized', reason: 'the token given is not one this endpoint accepts' }]);
    expect(await status('PUT', '/db', `Bearer ${DATA}`)).toEqual([403, { error: 'forbidden', reason: 'creating and deleting databases needs the admin token; the data token is not enough' }]);
    expect(await status('PUT', '/db', basic('admin', ADMIN))).toEqual([201, { ok: true }]);
    expect(await status('GET', '/db/missing', `Bearer ${DATA}`)).toEqual([404, { error: 'not_found', reason: 'missing' }]);
    expect(await status('GET', '/db/missing', basic('anyone', DATA))).toEqual([404, { error: 'not_found', reason: 'missing' }]);
    expect(await status('DELETE', '/db', basic('anyone', DATA))).toEqual([403, expect.objectContaining({ error: 'forbidden' })]);
    expect(await status('GET', '/nowhere/_find', 'Bearer nope')).toEqual([401, expect.objectContaining({ error: 'unauthorized' })]);
    const r = await app.inject({ method: 'GET', url: '/_all_dbs' });
    expect(r.headers['www-authenticate']).toBe('Basic realm="kvt"');
  });

  it('lets a PouchDB with the data token as its basic auth password replicate, and refuses one without', async () => {
    const local = new PouchDB(path.join(dir.path, 'local'));
    await local.bulkDocs(Array.from({ length: 30 }, (_, i) => ({ _id: `d${i}`, i })));
    const remote = new PouchDB(`http://127.0.0.1:${port}/db`, { auth: { username: 'pouch', password: DATA } });
    const result = await local.replicate.to(remote);
    expect([result.ok, result.docs_written]).toEqual([true, 30]);
    expect((await remote.get('d7')).i).toBe(7);
    const stranger = new PouchDB(`http://127.0.0.1:${port}/db`, { skip_setup: true });
    const refused = await stranger.get('d7').then(
      () => undefined,
      (err: { status?: number }) => err.status,
    );
    expect(refused).toBe(401);
    await Promise.all([local.close(), remote.close(), stranger.close()]);
  });

  it('reads the token of a bearer or basic Authorization header', () => {
    expect(tokenOf(`Bearer ${DATA}`)).toBe(DATA);
    expect(tokenOf(basic('u', 'p:with:colons'))).toBe('p:with:colons');
    expect(tokenOf('Digest abc')).toBeUndefined();
    expect(tokenOf(undefined)).toBeUndefined();
  });
});

describe('kvt couch configuration', () => {
  it('has defaults, takes KVT_COUCH_* variables, and lets flags override them', () => {
    expect(loadCouchConfig([], {})).toEqual({
      host: '127.0.0.1',
      port: 5984,
      controller: '127.0.0.1:9090',
      scope: 'couch',
      partitions: 4,
      timeoutMs: 30_000,
      maxBodyBytes: 64 * 1024 * 1024,
      logLevel: 'info',
    });
    const env = { KVT_COUCH_PORT: '6000', KVT_COUCH_SCOPE: 'docs', KVT_COUCH_DATA_TOKEN: DATA, KVT_COUCH_ADMIN_TOKEN: ADMIN, KVT_COUCH_PARTITIONS: '8' };
    expect(loadCouchConfig(['--port', '7000', '--controller', '10.0.0.1:9090'], env)).toEqual(
      expect.objectContaining({ port: 7000, scope: 'docs', partitions: 8, controller: '10.0.0.1:9090', dataToken: DATA, adminToken: ADMIN }),
    );
  });

  it('refuses bad usage with one line naming the flag', () => {
    expect(() => loadCouchConfig(['--scope', 'no/slash'], {})).toThrow('--scope "no/slash" is not a scope name: 1 to 250 letters, digits, "." or "-"');
    expect(() => loadCouchConfig(['--partitions', '2000'], {})).toThrow('--partitions is 2000; the maximum is 1024');
    expect(() => loadCouchConfig(['--log-level', 'loud'], {})).toThrow('--log-level must be one of debug, info, warn, error; got "loud"');
    expect(() => loadCouchConfig(['--data-token', DATA], {})).toThrow('--data-token needs --admin-token');
    expect(() => loadCouchConfig(['--tls-cert', 'c.pem'], {})).toThrow('--tls-cert needs --tls-key (the private key of the certificate)');
    expect(() => loadCouchConfig([], { KVT_COUCH_DATA_TOKEN: '' })).toThrow('KVT_COUCH_DATA_TOKEN is set but empty; unset it to run without it');
    expect(() => loadCouchConfig(['extra'], {})).toThrow('unexpected argument "extra" (see --help)');
  });

  it('gives a scope one uuid across restarts, and other scopes others', () => {
    expect(serverUuid('couch')).toBe(serverUuid('couch'));
    expect(serverUuid('couch')).toMatch(/^[0-9a-f]{32}$/);
    expect(serverUuid('other')).not.toBe(serverUuid('couch'));
  });
});
