/**
 * Bearer tokens end to end with real processes: a controller and two segment stores configured with
 * a data token and an admin token (the controller by flags, the stores by environment variables).
 * Missing token → UnauthenticatedError, wrong token → PermissionDeniedError, the data token reads and
 * writes data but changes no metadata, the admin token does everything, the stores register with the
 * admin token — and no token ever shows in any process's output.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, KeyValueTableFactory, KeyValueTableManager, PermissionDeniedError, SegmentStoreNotFoundError, Serializers, UnauthenticatedError } from '../../client';
import { freePort, KvtProcess, spawnKvt, startController, startSegmentStore, tempDir } from '../harness/process';
import { kvtCommand, rawCall, rawStream } from './security-helpers';

const ADMIN = `admin-${randomBytes(16).toString('hex')}`;
const DATA = `data-${randomBytes(16).toString('hex')}`;
const WRONG = `wrong-${randomBytes(16).toString('hex')}`;
const utf8 = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('bearer tokens', () => {
  const dir = tempDir('kvt-tokens-');
  const processes: KvtProcess[] = [];
  let controller: KvtProcess;
  let stores: KvtProcess[];
  const manager = (token?: string) => new KeyValueTableManager({ controller: controller.address, token });
  const factory = (token?: string) => KeyValueTableFactory.withScope('guarded', { controller: controller.address, token });

  beforeAll(async () => {
    controller = await startController(path.join(dir.path, 'controller'), ['--admin-token', ADMIN, '--data-token', DATA, '--log-level', 'debug']);
    processes.push(controller);
    const env = { KVT_SEGMENTSTORE_ADMIN_TOKEN: ADMIN, KVT_SEGMENTSTORE_DATA_TOKEN: DATA };
    stores = [];
    for (let i = 0; i < 2; i++) {
      const store = await startSegmentStore(path.join(dir.path, `store-${i}`), controller.address, ['--log-level', 'debug'], env);
      processes.push(store);
      await store.waitForLog('registered with controller');
      stores.push(store);
    }
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    dir.dispose();
  });

  it('lets the stores register with the admin token', async () => {
    const m = manager(DATA);
    try {
      expect((await m.listSegmentStores()).map((s) => s.live)).toEqual([true, true]);
    } finally {
      await m.close();
    }
  });

  it('fails calls without a token with UnauthenticatedError', async () => {
    const m = manager();
    const f = factory();
    try {
      const err = (await rejection(collect(m.listScopes()))) as UnauthenticatedError;
      expect(err).toBeInstanceOf(UnauthenticatedError);
      expect(err.code).toBe('UNAUTHENTICATED');
      expect(err.message).toBe('ListScopes needs a bearer token: send metadata "authorization: Bearer <token>"');
      expect(await rejection(m.createScope('guarded'))).toBeInstanceOf(UnauthenticatedError);
      expect(await rejection(f.forKeyValueTable('t', utf8).get(null, 'k'))).toBeInstanceOf(UnauthenticatedError);
    } finally {
      await f.close();
      await m.close();
    }
  });

  it('fails calls with a wrong token with PermissionDeniedError', async () => {
    const m = manager(WRONG);
    try {
      const err = (await rejection(collect(m.listScopes()))) as PermissionDeniedError;
      expect(err).toBeInstanceOf(PermissionDeniedError);
      expect(err.code).toBe('PERMISSION_DENIED');
      expect(err.message).toBe('ListScopes was called with a token this server does not accept');
      expect(await rejection(m.createScope('guarded'))).toBeInstanceOf(PermissionDeniedError);
    } finally {
      await m.close();
    }
  });

  it('lets the admin token change metadata and the data token only read and write data', async () => {
    const admin = manager(ADMIN);
    const data = manager(DATA);
    const f = factory(DATA);
    try {
      const denied = (await rejection(data.createScope('guarded'))) as PermissionDeniedError;
      expect(denied).toBeInstanceOf(PermissionDeniedError);
      expect(denied.message).toBe('CreateScope needs the admin token; the data token is not enough');
      expect(await admin.createScope('guarded')).toBe(true);
      expect(await rejection(data.createKeyValueTable('guarded', 't', { partitionCount: 2 }))).toBeInstanceOf(PermissionDeniedError);
      // The controller creates the segments on the stores with its admin token.
      expect(await admin.createKeyValueTable('guarded', 't', { partitionCount: 2 })).toBe(true);
      expect(await rejection(data.updateKeyValueTable('guarded', 't', { partitionCount: 2 }))).toBeInstanceOf(PermissionDeniedError);
      expect(await rejection(data.deleteKeyValueTable('guarded', 't'))).toBeInstanceOf(PermissionDeniedError);
      expect(await rejection(data.deleteScope('guarded'))).toBeInstanceOf(PermissionDeniedError);
      const removal = (await rejection(data.removeSegmentStore('no-such-store'))) as PermissionDeniedError;
      expect(removal).toBeInstanceOf(PermissionDeniedError);
      expect(removal.message).toBe('RemoveSegmentStore needs the admin token; the data token is not enough');
      expect(await rejection(admin.removeSegmentStore('no-such-store'))).toBeInstanceOf(SegmentStoreNotFoundError);
      expect(await data.getKeyValueTableConfiguration('guarded', 't')).toEqual({ partitionCount: 2 });
      expect(await collect(data.listKeyValueTables('guarded'))).toEqual([{ scope: 'guarded', name: 't' }]);
      const table = f.forKeyValueTable('t', utf8);
      await table.put(null, 'k', 'v');
      expect((await table.get(null, 'k'))?.value).toBe('v');
    } finally {
      await f.close();
      await data.close();
      await admin.close();
    }
  });

  it('answers raw calls with the kvt-error-code trailer on both services', async () => {
    const store = stores[0].address;
    expect(await rawCall('SegmentStore', store, 'ListSegments', {})).toMatchObject({ ok: false, status: grpc.status.UNAUTHENTICATED, code: 'UNAUTHENTICATED' });
    expect(await rawCall('SegmentStore', store, 'ListSegments', {}, { authorization: `Basic ${DATA}` })).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await rawCall('SegmentStore', store, 'ListSegments', {}, { authorization: `Bearer ${DATA}` })).toEqual({ ok: true });
    const create = { segmentId: 'raw-segment', table: 'guarded/raw' };
    expect(await rawCall('SegmentStore', store, 'CreateSegment', create, { authorization: `Bearer ${DATA}` })).toMatchObject({
      ok: false,
      status: grpc.status.PERMISSION_DENIED,
      code: 'PERMISSION_DENIED',
      message: 'CreateSegment needs the admin token; the data token is not enough',
    });
    expect(await rawCall('SegmentStore', store, 'DeleteSegment', { segmentId: 'raw-segment' }, { authorization: `Bearer ${DATA}` })).toMatchObject({ code: 'PERMISSION_DENIED' });
    const register = { storeId: '00000000-0000-4000-8000-000000000000', address: '127.0.0.1:1' };
    expect(await rawCall('Controller', controller.address, 'RegisterSegmentStore', register, { authorization: `Bearer ${DATA}` })).toMatchObject({
      ok: false,
      status: grpc.status.PERMISSION_DENIED,
      code: 'PERMISSION_DENIED',
    });
    expect(await rawCall('Controller', controller.address, 'Heartbeat', register, { authorization: `Bearer ${WRONG}` })).toMatchObject({ code: 'PERMISSION_DENIED' });
  });

  it('checks the token when an Execute stream opens', async () => {
    const store = stores[0].address;
    expect(await rawStream(store)).toMatchObject({
      ok: false,
      status: grpc.status.UNAUTHENTICATED,
      code: 'UNAUTHENTICATED',
      message: 'ExecuteStream needs a bearer token: send metadata "authorization: Bearer <token>"',
    });
    expect(await rawStream(store, { authorization: `Bearer ${WRONG}` })).toMatchObject({ ok: false, status: grpc.status.PERMISSION_DENIED, code: 'PERMISSION_DENIED' });
    expect(await rawStream(store, { authorization: `Bearer ${DATA}` })).toEqual({ ok: true });
    expect(await rawStream(store, { authorization: `Bearer ${ADMIN}` })).toEqual({ ok: true });
  });

  it('keeps a store with the wrong admin token out of the cluster, saying why', async () => {
    const intruder = await startSegmentStore(path.join(dir.path, 'intruder'), controller.address, ['--register-retry-max-ms', '200'], {
      KVT_SEGMENTSTORE_ADMIN_TOKEN: WRONG,
    });
    processes.push(intruder);
    await intruder.waitForLog('controller refused the registration (check --admin-token); retrying');
    expect(intruder.logs.some((r) => r.msg === 'registered with controller')).toBe(false);
    const m = manager(ADMIN);
    try {
      expect(await m.listSegmentStores()).toHaveLength(2);
    } finally {
      await m.close();
    }
  });

  it('lets the CLI send a token from --token or KVT_TOKEN', async () => {
    const listed = await kvtCommand(['table', 'list', 'guarded', '--controller', controller.address], { KVT_TOKEN: DATA });
    expect(listed).toMatchObject({ code: 0, stdout: 'guarded/t\n' });
    const put = await kvtCommand(['put', 'guarded/t', 'cli', 'yes', '--controller', controller.address, '--token', DATA]);
    expect(put.code).toBe(0);
    const bare = await kvtCommand(['scope', 'list', '--controller', controller.address]);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toBe('kvt scope list: ListScopes needs a bearer token: send metadata "authorization: Bearer <token>" [UNAUTHENTICATED]\n');
    const asData = await kvtCommand(['scope', 'create', 'other', '--controller', controller.address], { KVT_TOKEN: DATA });
    expect(asData.stderr).toBe('kvt scope create: CreateScope needs the admin token; the data token is not enough [PERMISSION_DENIED]\n');
  });

  it('rejects a token the client cannot send without echoing it', () => {
    const secret = 'not a valid token';
    let err: unknown;
    try {
      manager(secret);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toBe('the token must be 1 to 4096 visible ASCII characters (no spaces); got 17 characters');
  });

  it('redacts the tokens in the effective-config lines', () => {
    const config = controller.logs.find((r) => r.msg === 'controller config');
    expect(config).toMatchObject({ dataToken: '[redacted]', adminToken: '[redacted]' });
    expect(stores[0].logs.find((r) => r.msg === 'effective config')).toMatchObject({ dataToken: '[redacted]', adminToken: '[redacted]' });
  });

  it('never writes a token to any log or stderr', async () => {
    expect(controller.logs.some((r) => r.msg === 'call rejected')).toBe(true);
    for (const proc of processes) {
      const output = proc.logs.map((r) => JSON.stringify(r)).join('\n') + proc.stderr.join('');
      expect(output.length).toBeGreaterThan(0);
      for (const token of [ADMIN, DATA, WRONG]) expect(output.includes(token)).toBe(false);
    }
  });
});

describe('token flags', () => {
  it('refuses a data token without an admin token, without echoing it', async () => {
    const dir = tempDir('kvt-token-flags-');
    try {
      const proc = spawnKvt(['controller', '--port', '0', '--data-dir', dir.path], { KVT_CONTROLLER_DATA_TOKEN: DATA });
      expect(await proc.waitForExit()).toBe(2);
      expect(proc.stderr.join('')).toBe('kvt controller: --data-token needs --admin-token\n');
    } finally {
      dir.dispose();
    }
  });

  it('refuses a malformed token by its length only', async () => {
    const dir = tempDir('kvt-token-flags-');
    try {
      const proc = spawnKvt(['segmentstore', '--port', '0', '--data-dir', dir.path, '--admin-token', 'two words']);
      expect(await proc.waitForExit()).toBe(2);
      expect(proc.stderr.join('')).toBe('kvt segmentstore: --admin-token must be 1 to 4096 visible ASCII characters (no spaces); got 9 characters\n');
    } finally {
      dir.dispose();
    }
  });

  it('refuses a token variable that is set but empty, which would otherwise leave the server open', async () => {
    using dir = tempDir('kvt-token-flags-');
    for (const [command, name] of [
      ['controller', 'KVT_CONTROLLER_ADMIN_TOKEN'],
      ['segmentstore', 'KVT_SEGMENTSTORE_DATA_TOKEN'],
      ['cluster', 'KVT_CLUSTER_ADMIN_TOKEN'],
    ]) {
      const proc = spawnKvt([command, '--data-dir', path.join(dir.path, command)], { [name]: '' });
      expect(await proc.waitForExit()).toBe(2);
      expect(proc.stderr.join('')).toBe(`kvt ${command}: ${name} is set but empty; unset it to run without it\n`);
    }
  });
});

describe("kvt cluster and the shell's own token variables", () => {
  it("does not pass a leftover KVT_CONTROLLER_* token on to its controller: the cluster sets its children's tokens", async () => {
    using dir = tempDir('kvt-token-cluster-');
    const cluster = spawnKvt(['cluster', '--data-dir', dir.path, '--controller-port', String(await freePort()), '--segment-store-port', '0'], {
      KVT_CONTROLLER_ADMIN_TOKEN: ADMIN,
    });
    try {
      // With the leftover admin token the controller would refuse the stores' registration for ever.
      const deadline = Date.now() + 30_000;
      while (cluster.logs.filter((r) => r.msg === 'registered with controller').length < 2) {
        if (Date.now() > deadline || !cluster.running) throw new Error(`stores did not register: ${cluster.stderr.join('')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(cluster.logs.some((r) => String(r.msg).startsWith('controller refused the registration'))).toBe(false);
    } finally {
      expect(await cluster.stop()).toBe(0);
    }
  });
});
