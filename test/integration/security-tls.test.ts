/**
 * TLS end to end with real processes: a controller and two segment stores serving TLS with a
 * certificate made for this test, stores registering and the controller creating segments over TLS,
 * the client and the CLI working through it, and plaintext or untrusting clients failing fast with
 * UnavailableError.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, Serializers, UnavailableError } from '../../client';
import { quietIpServernameWarning } from '../../server-kit/tls';
import { freePort, KvtProcess, spawnKvt, tempDir, TestCluster } from '../harness/process';
import { kvtCommand, makeCertificates, rawCall, TestCertificates } from './security-helpers';

const utf8 = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };
/** Fail fast instead of retrying for 30 s: the failures expected here are permanent. */
const FAST_FAIL = { timeoutMs: 5_000, retry: { maxRetries: 1, initialBackoffMs: 50, maxBackoffMs: 100 } };

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('TLS cluster', () => {
  const dir = tempDir('kvt-tls-');
  let certs: TestCertificates;
  let cluster: TestCluster;
  let tlsArgs: string[];

  beforeAll(async () => {
    // The clients below run in this process and dial 127.0.0.1 over TLS, as kvt's processes do.
    quietIpServernameWarning();
    certs = makeCertificates(path.join(dir.path, 'certs'));
    tlsArgs = ['--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--tls-ca', certs.caCert];
    cluster = await TestCluster.start({ stores: 2, root: path.join(dir.path, 'cluster'), controllerArgs: tlsArgs, storeArgs: tlsArgs });
  });
  afterAll(async () => {
    await cluster?.stop();
    dir.dispose();
  });

  it('serves the client end to end: stores registered over TLS, table created, put and get', async () => {
    // The CA as PEM text for the manager, as a Buffer for the factory: both forms are accepted.
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress, tls: { ca: fs.readFileSync(certs.caCert, 'utf8') } });
    const factory = KeyValueTableFactory.withScope('secure', { controller: cluster.controllerAddress, tls: { ca: fs.readFileSync(certs.caCert) } });
    try {
      const stores = await manager.listSegmentStores();
      expect(stores.map((s) => s.live)).toEqual([true, true]);
      expect(await manager.createScope('secure')).toBe(true);
      // Creating a table makes the controller call CreateSegment on the stores, over TLS.
      expect(await manager.createKeyValueTable('secure', 't', { partitionCount: 4 })).toBe(true);
      const table = factory.forKeyValueTable('t', utf8);
      const puts = await Promise.all(Array.from({ length: 16 }, (_, i) => table.put(null, `k${i}`, `v${i}`)));
      expect(new Set(puts.map((v) => v.segmentId)).size).toBeGreaterThan(1);
      for (let i = 0; i < 16; i++) expect((await table.get(null, `k${i}`))?.value).toBe(`v${i}`);
    } finally {
      await factory.close();
      await manager.close();
    }
  });

  it('fails a plaintext client with UnavailableError instead of hanging', async () => {
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress, ...FAST_FAIL });
    const factory = KeyValueTableFactory.withScope('secure', { controller: cluster.controllerAddress, ...FAST_FAIL });
    try {
      expect(await rejection(manager.createScope('plain'))).toBeInstanceOf(UnavailableError);
      const table = factory.forKeyValueTable('t', utf8);
      expect(await rejection(table.get(null, 'k0'))).toBeInstanceOf(UnavailableError);
    } finally {
      await factory.close();
      await manager.close();
    }
  });

  it('fails a client that trusts another CA with UnavailableError', async () => {
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress, tls: { ca: fs.readFileSync(certs.otherCaCert) }, ...FAST_FAIL });
    try {
      expect(await rejection(manager.createScope('untrusted'))).toBeInstanceOf(UnavailableError);
    } finally {
      await manager.close();
    }
  });

  it('refuses plaintext on the segment stores too', async () => {
    const plain = await rawCall('SegmentStore', cluster.stores[0].address, 'ListSegments', {}, { timeoutMs: 5_000 });
    expect(plain.ok).toBe(false);
    expect(plain.status).toBe(grpc.status.UNAVAILABLE);
    const secure = await rawCall(
      'SegmentStore',
      cluster.stores[0].address,
      'ListSegments',
      {},
      {
        credentials: grpc.credentials.createSsl(fs.readFileSync(certs.caCert)),
      },
    );
    expect(secure).toEqual({ ok: true });
  });

  it('lets the CLI connect with --tls-ca (and KVT_TLS_CA)', async () => {
    const put = await kvtCommand(['put', 'secure/t', 'cli-key', 'cli-value', '--controller', cluster.controllerAddress, '--tls-ca', certs.caCert]);
    expect(put.stderr).toBe('');
    expect(put.code).toBe(0);
    const get = await kvtCommand(['get', 'secure/t', 'cli-key', '--controller', cluster.controllerAddress], { KVT_TLS_CA: certs.caCert });
    expect(get).toMatchObject({ code: 0, stdout: 'cli-value\n' });
  });

  it('keeps the processes quiet on stderr (no TLS warnings) and serving', () => {
    for (const proc of [cluster.controller, ...cluster.stores]) {
      expect(proc.running).toBe(true);
      expect(proc.stderr.join('')).toBe('');
    }
  });

  it('says which CA file the CLI cannot read', async () => {
    const missing = path.join(dir.path, 'no-such-ca.pem');
    const r = await kvtCommand(['scope', 'list', '--controller', cluster.controllerAddress, '--tls-ca', missing]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`kvt scope list: cannot read --tls-ca ${missing}: ENOENT\n`);
  });
});

describe('TLS flags', () => {
  const dir = tempDir('kvt-tls-flags-');
  let certs: TestCertificates;
  beforeAll(() => {
    certs = makeCertificates(path.join(dir.path, 'certs'));
  });
  afterAll(() => dir.dispose());

  async function failedStart(args: string[]): Promise<{ code: number | null; stderr: string }> {
    const proc = spawnKvt(args);
    const code = await proc.waitForExit();
    return { code, stderr: proc.stderr.join('') };
  }

  it('rejects --tls-cert without --tls-key as bad usage', async () => {
    const r = await failedStart(['controller', '--port', '0', '--data-dir', path.join(dir.path, 'c1'), '--tls-cert', certs.serverCert]);
    expect(r).toEqual({ code: 2, stderr: 'kvt controller: --tls-cert needs --tls-key (the private key of the certificate)\n' });
  });

  it('names the missing certificate file', async () => {
    const missing = path.join(dir.path, 'missing.pem');
    const r = await failedStart(['segmentstore', '--port', '0', '--data-dir', path.join(dir.path, 's1'), '--tls-cert', missing, '--tls-key', certs.serverKey]);
    expect(r).toEqual({ code: 1, stderr: `kvt segmentstore: cannot read --tls-cert ${missing}: ENOENT\n` });
  });

  it('refuses a key that does not belong to the certificate', async () => {
    const caKey = path.join(path.dirname(certs.caCert), 'kvt-test-ca.key');
    const r = await failedStart(['controller', '--port', '0', '--data-dir', path.join(dir.path, 'c2'), '--tls-cert', certs.serverCert, '--tls-key', caKey]);
    expect(r).toEqual({ code: 1, stderr: `kvt controller: --tls-key ${caKey} does not match --tls-cert ${certs.serverCert}\n` });
  });

  it('refuses an expired certificate at start, naming the date', async () => {
    const certDir = path.dirname(certs.caCert);
    execFileSync(
      'openssl',
      ['x509', '-req', '-in', 'server.csr', '-CA', 'kvt-test-ca.pem', '-CAkey', 'kvt-test-ca.key', '-CAcreateserial', '-days', '-1', '-out', 'expired.pem', '-extfile', 'server.ext'],
      { cwd: certDir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const expired = path.join(certDir, 'expired.pem');
    const r = await failedStart(['controller', '--port', '0', '--data-dir', path.join(dir.path, 'c4'), '--tls-cert', expired, '--tls-key', certs.serverKey]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^kvt controller: --tls-cert ${expired} expired on \\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z\n$`));
  });

  it('refuses kvt cluster --tls-ca without a certificate: its stores could never reach a plaintext controller', async () => {
    const r = await failedStart(['cluster', '--data-dir', path.join(dir.path, 'k1'), '--tls-ca', certs.caCert]);
    expect(r).toEqual({ code: 2, stderr: 'kvt cluster: --tls-ca needs --tls-cert and --tls-key (a TLS cluster serves TLS in every process)\n' });
  });

  it('refuses a certificate file that holds no certificate', async () => {
    const r = await failedStart(['controller', '--port', '0', '--data-dir', path.join(dir.path, 'c3'), '--tls-cert', certs.serverKey, '--tls-key', certs.serverKey]);
    expect(r).toEqual({ code: 1, stderr: `kvt controller: --tls-cert ${certs.serverKey} is not a PEM certificate\n` });
  });
});

/** Waits (bounded) until `proc` has logged `msg` `count` times. */
async function waitForLogs(proc: KvtProcess, msg: string, count: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (proc.logs.filter((r) => r.msg === msg).length < count) {
    if (!proc.running) throw new Error(`kvt cluster exited: ${proc.stderr.join('')}`);
    if (Date.now() > deadline) throw new Error(`"${msg}" was logged fewer than ${count} times`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kvt cluster with TLS and tokens', () => {
  it('passes the TLS flags and the tokens on to every process', async () => {
    const dir = tempDir('kvt-tls-cluster-');
    const certs = makeCertificates(path.join(dir.path, 'certs'));
    const admin = `admin-${randomBytes(12).toString('hex')}`;
    const port = await freePort();
    const cluster = spawnKvt(
      [
        'cluster',
        '--data-dir',
        path.join(dir.path, 'data'),
        '--segment-stores',
        '2',
        '--controller-port',
        String(port),
        '--segment-store-port',
        '0',
        '--tls-cert',
        certs.serverCert,
        '--tls-key',
        certs.serverKey,
        '--tls-ca',
        certs.caCert,
      ],
      { KVT_CLUSTER_ADMIN_TOKEN: admin },
    );
    const controller = `127.0.0.1:${port}`;
    const manager = new KeyValueTableManager({ controller, tls: { ca: fs.readFileSync(certs.caCert) }, token: admin });
    try {
      // Both stores reached the TLS controller and passed its token check.
      await waitForLogs(cluster, 'registered with controller', 2);
      expect((await manager.listSegmentStores()).map((s) => s.live)).toEqual([true, true]);
      expect(await manager.createScope('via-cluster')).toBe(true);
      expect(await manager.createKeyValueTable('via-cluster', 't', { partitionCount: 2 })).toBe(true);
      const output = cluster.logs.map((r) => JSON.stringify(r)).join('\n') + cluster.stderr.join('');
      expect(output.includes(admin)).toBe(false);
    } finally {
      await manager.close();
      expect(await cluster.stop()).toBe(0);
      dir.dispose();
    }
  });
});
