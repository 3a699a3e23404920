import { describe, expect, it } from 'vitest';
import { KvtFault } from '../../../server-kit/fault';
import { decodeContinuationToken, effectiveListLimit, encodeContinuationToken, validateName, validatePartitionCount, validateStoreIdentity } from '../../../controller/service/validation';

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
    expect(faultOf(() => validateStoreIdentity('', '127.0.0.1:1')).message).toBe('storeId is empty');
    expect(faultOf(() => validateStoreIdentity('s', '127.0.0.1')).message).toMatch(/^address "127.0.0.1" is invalid/);
    expect(faultOf(() => validateStoreIdentity('s', 'h:70000')).message).toMatch(/port in 1-65535/);
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
