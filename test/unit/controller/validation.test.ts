import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../controller/config';
import { ControllerServer } from '../../../controller/server';
import { KvtFault } from '../../../server-kit/fault';
import {
  decodeContinuationToken,
  effectiveListLimit,
  encodeContinuationToken,
  validateName,
  validatePartitionCount,
  validateStoreId,
  validateStoreIdentity,
} from '../../../controller/service/validation';
import { tempDir } from '../../harness/process';
import { controllerClient, failureOf } from '../../integration/controller-helpers';

function faultOf(fn: () => void): KvtFault {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KvtFault);
    return err as KvtFault;
  }
  throw new Error('expected a KvtFault');
}

describe('controller input validation', () => {
  it('rejects partitionCount outside 1-1024 naming the field and the limit', () => {
    expect(faultOf(() => validatePartitionCount(1025)).message).toBe('partitionCount is 1025; the maximum is 1024');
    expect(faultOf(() => validatePartitionCount(0)).message).toBe('partitionCount is 0; the minimum is 1');
    expect(faultOf(() => validatePartitionCount(0)).code).toBe('INVALID_ARGUMENT');
    expect(() => validatePartitionCount(1)).not.toThrow();
    expect(() => validatePartitionCount(1024)).not.toThrow();
  });

  it('rejects names outside [A-Za-z0-9.-]{1,250} naming the field', () => {
    expect(faultOf(() => validateName('table', '123%$')).message).toMatch(/^table name "123%\$" is invalid: .*\[A-Za-z0-9.-\]\{1,250\}/);
    expect(faultOf(() => validateName('scope', '')).message).toBe('scope name is empty; it must be 1 to 250 characters');
    expect(faultOf(() => validateName('scope', 'a'.repeat(251))).message).toBe('scope name is 251 characters; the maximum is 250');
    expect(() => validateName('table', 'a'.repeat(250))).not.toThrow();
    expect(() => validateName('table', 'Pages.v2-x')).not.toThrow();
  });

  it('accepts host:port store addresses and refuses anything else', () => {
    expect(() => validateStoreIdentity('store-1', '127.0.0.1:12345')).not.toThrow();
    expect(() => validateStoreIdentity('store-1', '[::1]:12345')).not.toThrow();
    expect(faultOf(() => validateStoreIdentity('', '127.0.0.1:1')).message).toBe('storeId is empty; it must be 1 to 250 characters');
    expect(faultOf(() => validateStoreIdentity('s', '127.0.0.1')).message).toMatch(/^address "127.0.0.1" is invalid/);
    expect(faultOf(() => validateStoreIdentity('s', 'h:70000')).message).toMatch(/port in 1-65535/);
  });

  it('takes store ids of 1 to 250 characters, naming storeId and the maximum otherwise', () => {
    expect(() => validateStoreId('s'.repeat(250))).not.toThrow();
    expect(faultOf(() => validateStoreId('s'.repeat(251))).message).toBe('storeId is 251 characters; the maximum is 250');
    expect(faultOf(() => validateStoreId('s'.repeat(251))).code).toBe('INVALID_ARGUMENT');
    expect(faultOf(() => validateStoreId('')).message).toBe('storeId is empty; it must be 1 to 250 characters');
  });

  it('round-trips continuation tokens and refuses forged ones', () => {
    expect(decodeContinuationToken(encodeContinuationToken('t-3.x'))).toBe('t-3.x');
    expect(decodeContinuationToken('')).toBe('');
    expect(faultOf(() => decodeContinuationToken('not a token!')).message).toMatch(/^continuationToken is malformed/);
    expect(faultOf(() => decodeContinuationToken(Buffer.from('t-3').toString('base64url'))).code).toBe('INVALID_ARGUMENT');
  });

  it('uses 100 for a zero limit and clamps large ones to 1000', () => {
    expect(effectiveListLimit(0)).toBe(100);
    expect(effectiveListLimit(7)).toBe(7);
    expect(effectiveListLimit(5000)).toBe(1000);
  });
});

describe('controller RPCs on bad input', () => {
  it('answer INVALID_ARGUMENT naming the field, and write nothing', async () => {
    using dir = tempDir('kvt-ctl-validation-');
    await using server = await ControllerServer.start(loadConfig(['--port', '0', '--data-dir', path.join(dir.path, 'c')], {}));
    const client = controllerClient(`127.0.0.1:${server.port}`);
    try {
      const invalid = async (method: string, request: object) => {
        const failure = await failureOf(client.call(method, request));
        expect(failure.kvtCode).toBe('INVALID_ARGUMENT');
        return failure.message;
      };
      expect(await invalid('CreateScope', { scope: 'bad scope' })).toMatch(/^scope name "bad scope" is invalid/);
      expect(await invalid('CreateScope', { scope: 's'.repeat(251) })).toBe('scope name is 251 characters; the maximum is 250');
      expect(await invalid('DeleteScope', { scope: '' })).toBe('scope name is empty; it must be 1 to 250 characters');
      expect(await client.call('ListScopes', {})).toEqual({ scopes: [] });

      expect(await invalid('RegisterSegmentStore', { storeId: 'store-1', address: 'nowhere' })).toMatch(/^address "nowhere" is invalid/);
      expect(await invalid('RegisterSegmentStore', { storeId: 's'.repeat(251), address: '127.0.0.1:1' })).toBe('storeId is 251 characters; the maximum is 250');
      expect(await invalid('RegisterSegmentStore', { storeId: '', address: '127.0.0.1:1' })).toBe('storeId is empty; it must be 1 to 250 characters');
      expect(await client.call('ListSegmentStores', {})).toEqual({ stores: [] });

      await client.call('RegisterSegmentStore', { storeId: 'store-1', address: '127.0.0.1:1' });
      expect(await invalid('Heartbeat', { storeId: 'store-1', address: '127.0.0.1:0' })).toMatch(/^address "127.0.0.1:0" is invalid/);
      expect(await invalid('RemoveSegmentStore', { storeId: '' })).toBe('storeId is empty; it must be 1 to 250 characters');
      const { stores } = await client.call<{ stores: { storeId: string; address: string }[] }>('ListSegmentStores', {});
      expect(stores.map((s) => [s.storeId, s.address])).toEqual([['store-1', '127.0.0.1:1']]);
    } finally {
      client.close();
    }
  });
});
