/**
 * `kvt couch` as a command (issue 34): its help and bad usage, and `kvt cluster --couch-port` running
 * it beside a TLS cluster with tokens — HTTPS with the cluster's certificate, the data token for data
 * (bearer or basic auth), the admin token for creating databases, 401/403 otherwise — and stopping
 * with the cluster.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, KvtProcess, spawnKvt, tempDir } from '../harness/process';
import { kvtCommand, makeCertificates, TestCertificates } from './security-helpers';

const ADMIN = `admin-${randomBytes(16).toString('hex')}`;
const DATA = `data-${randomBytes(16).toString('hex')}`;

describe('kvt couch', () => {
  it('prints its options with their variables for --help, and exits 2 with one line on bad usage', async () => {
    const help = await kvtCommand(['couch', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--port', '--controller', '--scope', '--partitions', '--data-token', '--admin-token', '--tls-cert', '--max-body-bytes']) expect(help.stdout).toContain(flag);
    expect(help.stdout).toContain('[env KVT_COUCH_PORT]');
    const bad = await kvtCommand(['couch', '--port', 'abc']);
    expect([bad.code, bad.stderr]).toEqual([2, 'kvt couch: --port must be an integer; got "abc"\n']);
    const unreachable = await kvtCommand(['couch', '--port', '0', '--controller', '127.0.0.1:1', '--timeout-ms', '500']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^kvt couch: .+\n$/);
  });
});

describe('kvt cluster --couch-port with TLS and tokens', () => {
  const dir = tempDir('kvt-couch-cli-');
  let certs: TestCertificates;
  let cluster: KvtProcess;
  let port: number;

  /** An HTTPS request to the endpoint, trusting the test CA. */
  function request(method: string, url: string, authorization?: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path: url,
          ca: fs.readFileSync(certs.caCert),
          headers: { ...(authorization ? { authorization } : {}), 'content-type': 'application/json' },
          timeout: 30_000,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /**
   * A longpoll of the endpoint, resolved once it waits (its first heartbeat came) with the promise of
   * its answer: the status and the JSON after the heartbeats (wrapped, so as not to be awaited).
   */
  function startLongpoll(url: string, authorization: string): Promise<{ answer: Promise<{ status: number; body: unknown }> }> {
    return new Promise((waiting, reject) => {
      const req = https.get({ host: '127.0.0.1', port, path: url, ca: fs.readFileSync(certs.caCert), headers: { authorization } }, (res) => {
        let text = '';
        const answer = new Promise<{ status: number; body: unknown }>((resolve, fail) => {
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          res.on('error', fail);
          res.on('close', () => (res.complete ? undefined : fail(new Error(`the connection of ${url} ended before its answer`))));
        });
        res.setEncoding('utf8').on('data', (c: string) => {
          if (text === '') waiting({ answer });
          text += c;
        });
      });
      req.on('error', reject);
    });
  }

  beforeAll(async () => {
    certs = makeCertificates(path.join(dir.path, 'certs'));
    port = await freePort();
    const tls = ['--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--tls-ca', certs.caCert];
    cluster = spawnKvt(['cluster', '--data-dir', path.join(dir.path, 'data'), '--controller-port', String(await freePort()), '--segment-store-port', '0', '--couch-port', String(port), ...tls], {
      KVT_CLUSTER_DATA_TOKEN: DATA,
      KVT_CLUSTER_ADMIN_TOKEN: ADMIN,
    });
    await cluster.waitForLog('couch started', 30_000);
    await cluster.waitForLog('registered with controller', 30_000, () => cluster.logs.filter((l) => l.msg === 'registered with controller').length >= 2);
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
    dir.dispose();
  });

  it('serves HTTPS, asks callers for the tokens, and keeps documents in the TLS cluster', async () => {
    expect(await request('GET', '/')).toEqual({ status: 200, body: expect.objectContaining({ couchdb: 'Welcome', vendor: { name: 'kvt' } }) });
    expect((await request('GET', '/notes')).status).toBe(401);
    expect(await request('GET', '/notes', `Bearer ${DATA}`)).toEqual({ status: 404, body: { error: 'not_found', reason: 'Database does not exist: notes' } });
    expect((await request('PUT', '/notes', `Bearer ${DATA}`)).status).toBe(403);
    expect(await request('PUT', '/notes', `Bearer ${ADMIN}`)).toEqual({ status: 201, body: { ok: true } });
    const basic = `Basic ${Buffer.from(`app:${DATA}`).toString('base64')}`;
    const put = await request('PUT', '/notes/first', basic, { text: 'over TLS' });
    expect(put).toEqual({ status: 201, body: { ok: true, id: 'first', rev: expect.stringMatching(/^1-/) } });
    expect(await request('GET', '/notes/first', basic)).toEqual({ status: 200, body: { _id: 'first', _rev: (put.body as { rev: string }).rev, text: 'over TLS' } });
    expect(((await request('GET', '/notes/_changes', basic)).body as { results: { id: string }[] }).results.map((r) => r.id)).toEqual(['first']);
  });

  it('stops with the cluster, answering a longpoll waiting for changes at once', async () => {
    const longpoll = await startLongpoll('/notes/_changes?feed=longpoll&heartbeat=100&since=now', `Bearer ${DATA}`);
    expect(await cluster.stop()).toBe(0);
    expect(await longpoll.answer).toEqual({ status: 200, body: { results: [], last_seq: expect.any(String) } });
    expect(cluster.logs.some((r) => r.component === 'couch' && r.msg === 'couch started')).toBe(true);
  });
});
