import { describe, expect, it } from 'vitest';
import { decodeExecuteResponse, decodeExecuteStreamResponse, decodeIterateResponse, encodeExecuteRequest, encodeExecuteStreamRequest } from '../../../client/internal/wire-codec';
import { kvtPackage } from '../../../proto/load';
import type { ExecuteRequest } from '../../../proto/messages';
import { randomEntry, randomSubRequest, randomSubResponse, rng } from '../../harness/random-messages';

const service = kvtPackage().SegmentStore.service;

describe('client wire codecs', () => {
  it('encodes ExecuteRequest to bytes the loader decodes to the same message', () => {
    const rand = rng(3);
    for (let i = 0; i < 300; i++) {
      const req = { requests: Array.from({ length: Math.floor(rand() * 4) }, () => randomSubRequest(rand)) } as unknown as ExecuteRequest;
      const ours = encodeExecuteRequest(req);
      expect(service.Execute.requestDeserialize(ours)).toStrictEqual(service.Execute.requestDeserialize(service.Execute.requestSerialize(req)));
    }
  });

  it('decodes ExecuteResponse exactly like the loader', () => {
    const rand = rng(5);
    for (let i = 0; i < 300; i++) {
      const wire = service.Execute.responseSerialize({ responses: Array.from({ length: Math.floor(rand() * 4) }, () => randomSubResponse(rand)) });
      expect(decodeExecuteResponse(wire)).toStrictEqual(service.Execute.responseDeserialize(wire));
    }
  });

  it('decodes IterateResponse exactly like the loader, and rejects truncated input', () => {
    const rand = rng(9);
    for (let i = 0; i < 200; i++) {
      const wire = service.Iterate.responseSerialize({ items: Array.from({ length: Math.floor(rand() * 6) }, () => randomEntry(rand)), done: rand() < 0.5 });
      expect(decodeIterateResponse(wire)).toStrictEqual(service.Iterate.responseDeserialize(wire));
    }
    const wire = service.Iterate.responseSerialize({ items: [{ found: true, key: Buffer.from('key'), value: Buffer.from('v'), sequence: '1' }], done: true });
    expect(() => decodeIterateResponse(wire.subarray(0, 4))).toThrow(/truncated/);
  });

  it('decodes sequences that are not canonical decimals of up to 15 digits exactly like the loader', () => {
    const sequences = ['0', '7', '007', '0x1', '12a', '-1', '+5', '1e3', ' 1', '１２', '999999999999999', '1000000000000000', '18446744073709551615', '', 'é'];
    const wire = service.Execute.responseSerialize({ responses: [{ update: { sequences } }] });
    expect(decodeExecuteResponse(wire)).toStrictEqual(service.Execute.responseDeserialize(wire));
    const entries = sequences.map((sequence) => ({ found: true, key: Buffer.from('k'), value: Buffer.alloc(0), sequence }));
    const iterate = service.Iterate.responseSerialize({ items: entries, done: false });
    expect(decodeIterateResponse(iterate)).toStrictEqual(service.Iterate.responseDeserialize(iterate));
  });

  it('encodes ExecuteStreamRequest to bytes the loader decodes to the same message', () => {
    const rand = rng(21);
    for (let i = 0; i < 200; i++) {
      const id = i % 5 === 0 ? 0 : Math.floor(rand() * 2 ** 32);
      const msg = { id, request: { requests: Array.from({ length: Math.floor(rand() * 3) }, () => randomSubRequest(rand)) } as unknown as ExecuteRequest };
      expect(service.ExecuteStream.requestDeserialize(encodeExecuteStreamRequest(msg))).toStrictEqual(service.ExecuteStream.requestDeserialize(service.ExecuteStream.requestSerialize(msg)));
    }
  });

  it('decodes ExecuteStreamResponse exactly like the loader', () => {
    const rand = rng(23);
    for (let i = 0; i < 200; i++) {
      const kind = i % 3;
      const msg = {
        id: i % 5 === 0 ? 0 : Math.floor(rand() * 2 ** 32),
        ...(kind === 0 ? { response: { responses: Array.from({ length: Math.floor(rand() * 3) }, () => randomSubResponse(rand)) } } : {}),
        ...(kind === 1 ? { error: { code: 'UNAVAILABLE', message: 'stopping', index: 2, segmentId: '7' } } : {}),
      };
      const wire = service.ExecuteStream.responseSerialize(msg);
      expect(decodeExecuteStreamResponse(wire)).toStrictEqual(service.ExecuteStream.responseDeserialize(wire));
    }
  });
});
