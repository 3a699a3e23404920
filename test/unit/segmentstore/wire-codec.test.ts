import { describe, expect, it } from 'vitest';
import { kvtPackage } from '../../../proto/load';
import type { ExecuteResponse, IterateResponse } from '../../../proto/messages';
import { decodeExecuteRequest } from '../../../segmentstore/service/execute-request-decoder';
import { decodeExecuteStreamRequest, encodeExecuteResponse, encodeExecuteStreamResponse, encodeIterateResponse, MalformedStreamMessage } from '../../../segmentstore/service/wire-codec';
import { WireModification } from '../../../segmentstore/service/wire-modification';
import { lengthDelimited, messageType, randomMessage, rng, UNKNOWN_FIELDS } from '../../harness/random-messages';

const service = kvtPackage().SegmentStore.service;
/** Tags of ExecuteStreamRequest's request (2) and iterate (3). */
const loaderDecode = (name: 'Execute' | 'ExecuteStream' | 'Iterate', buf: Buffer): unknown => service[name].responseDeserialize(buf);

/** The fields of `Modification` in the loaded .proto (so a field added there is read here too). */
const MODIFICATION_FIELDS = messageType('Modification').fieldsArray.map((f) => f.name);

/**
 * A decoded message with each modification read field by field of the loaded `Modification` (keys
 * and values through their accessors), as a plain object: the decoder keeps keys and values as
 * ranges of the request (WireModification), and what they read as must be exactly what the loader
 * decodes.
 */
function asLoaded(decoded: unknown): unknown {
  if (decoded instanceof WireModification) {
    const fields = decoded as unknown as Record<string, unknown>;
    return Object.fromEntries(MODIFICATION_FIELDS.map((name) => [name, asLoaded(fields[name])]));
  }
  if (Array.isArray(decoded)) return decoded.map(asLoaded);
  if (decoded && typeof decoded === 'object' && !Buffer.isBuffer(decoded)) {
    return Object.fromEntries(Object.entries(decoded).map(([k, v]) => [k, asLoaded(v)]));
  }
  return decoded;
}

/** A random ExecuteStreamResponse as the store sends one: an error alone, or the response and the page. */
function storeStreamResponse(rand: () => number): Parameters<typeof encodeExecuteStreamResponse>[0] {
  const msg = randomMessage(rand, 'ExecuteStreamResponse');
  if (msg.error) {
    delete msg.response;
    delete msg.iterate;
  }
  return msg as unknown as Parameters<typeof encodeExecuteStreamResponse>[0];
}

// The random messages set every field of every message the codecs handle (their fields are walked
// from the loaded .proto): a field added there and not handled here fails these tests.
describe('segment store wire codecs', () => {
  it('decodes ExecuteRequest exactly like the loader, for many random requests', () => {
    const rand = rng(7);
    for (let i = 0; i < 300; i++) {
      const req = randomMessage(rand, 'ExecuteRequest');
      const wire = service.Execute.requestSerialize(req);
      expect(asLoaded(decodeExecuteRequest(wire))).toStrictEqual(service.Execute.requestDeserialize(wire));
    }
  });

  it('skips unknown fields and rejects truncated input', () => {
    // field 15 (varint 5) and field 14 (bytes "ab") before a real sub-request
    const unknown = Buffer.from([0x78, 0x05, 0x72, 0x02, 0x61, 0x62]);
    const wire = Buffer.concat([unknown, service.Execute.requestSerialize({ requests: [{ get: { segmentId: '3', keys: [] } }] })]);
    expect(asLoaded(decodeExecuteRequest(wire))).toStrictEqual(service.Execute.requestDeserialize(wire));
    const full = service.Execute.requestSerialize({ requests: [{ update: { segmentId: '1', modifications: [{ key: Buffer.from('k') }] } }] });
    expect(() => decodeExecuteRequest(full.subarray(0, full.length - 1))).toThrow(/truncated/);
  });

  it('encodes ExecuteResponse to bytes the loader decodes to the same message', () => {
    const rand = rng(11);
    for (let i = 0; i < 300; i++) {
      const res = randomMessage(rand, 'ExecuteResponse') as unknown as ExecuteResponse;
      const ours = encodeExecuteResponse(res);
      expect(loaderDecode('Execute', ours)).toStrictEqual(loaderDecode('Execute', service.Execute.responseSerialize(res)));
      // Default-valued fields are left out, so ours is never larger than the loader's.
      expect(ours.length).toBeLessThanOrEqual(service.Execute.responseSerialize(res).length);
    }
  });

  it('encodes IterateResponse to bytes the loader decodes to the same message', () => {
    const rand = rng(13);
    for (let i = 0; i < 200; i++) {
      const res = randomMessage(rand, 'IterateResponse') as unknown as IterateResponse;
      const ours = encodeIterateResponse(res);
      expect(loaderDecode('Iterate', ours)).toStrictEqual(loaderDecode('Iterate', service.Iterate.responseSerialize(res)));
      expect(ours.length).toBeLessThanOrEqual(service.Iterate.responseSerialize(res).length);
    }
  });

  it('decodes ExecuteStreamRequest exactly like the loader (id, request, or neither), with its size', () => {
    const rand = rng(17);
    for (let i = 0; i < 300; i++) {
      const wire = service.ExecuteStream.requestSerialize(randomMessage(rand, 'ExecuteStreamRequest'));
      const { bytes, ...decoded } = decodeExecuteStreamRequest(wire) as Exclude<ReturnType<typeof decodeExecuteStreamRequest>, MalformedStreamMessage>;
      expect(bytes).toBe(wire.length);
      expect(asLoaded(decoded)).toStrictEqual(service.ExecuteStream.requestDeserialize(wire));
    }
  });

  it('keeps the id of an ExecuteStreamRequest whose request or iterate does not decode, and throws when the message itself does not', () => {
    const request = service.Execute.requestSerialize({ requests: [{ update: { segmentId: '1', modifications: [{ key: Buffer.from('k') }] } }] });
    const cut = request.subarray(0, request.length - 1);
    const withRequest = Buffer.concat([Buffer.from([0x12, cut.length]), cut, Buffer.from([0x08, 0x07])]); // the id after it
    expect(decodeExecuteStreamRequest(withRequest)).toEqual(new MalformedStreamMessage(7, 'request is not a valid kvt.v1.ExecuteRequest: truncated field'));
    const withIterate = Buffer.from([0x08, 0x09, 0x1a, 0x02, 0x2a, 0x05]); // iterate: a 5-byte prefix announced, none present
    expect(decodeExecuteStreamRequest(withIterate)).toEqual(new MalformedStreamMessage(9, 'iterate is not a valid kvt.v1.IterateRequest: index out of range: 2 + 5 > 2'));
    // The message's own fields: a request field overrunning the message, a truncated id.
    expect(() => decodeExecuteStreamRequest(Buffer.from([0x08, 0x07, 0x12, 0x7f, 0x0a]))).toThrow(/truncated field/);
    expect(() => decodeExecuteStreamRequest(Buffer.from([0x08, 0x87]))).toThrow(/truncated varint/);
  });

  it('encodes ExecuteStreamResponse (a response, an error, a page, or nothing) to bytes the loader decodes to the same message', () => {
    const rand = rng(19);
    for (let i = 0; i < 300; i++) {
      const msg = storeStreamResponse(rand);
      const expected = loaderDecode('ExecuteStream', service.ExecuteStream.responseSerialize(msg));
      expect(loaderDecode('ExecuteStream', encodeExecuteStreamResponse(msg))).toStrictEqual(expected);
      // A page already encoded (what iterateForWire returns) goes in as it is.
      const page = msg.iterate as IterateResponse | null | undefined;
      if (page) expect(loaderDecode('ExecuteStream', encodeExecuteStreamResponse({ ...msg, iterate: encodeIterateResponse(page) }))).toStrictEqual(expected);
    }
  });

  it('decodes batches whose modifications repeat or change their family, ttl and condition segment exactly like the loader', () => {
    const batches: string[][] = [
      Array.from({ length: 100 }, () => 'bf-3-12'),
      Array.from({ length: 20 }, (_, i) => (i % 2 ? 'bf-3-12' : 'bf-3-13')), // same length, one byte apart
      ['a', 'ab', 'a', '', 'a', '', ''],
      ['é-ü', 'é-ü', 'e-ü', 'é-ü', '𝄞x', '𝄞x', '１２', '12'],
      Array.from({ length: 6 }, (_, i) => 'f'.repeat(40) + (i < 3 ? 'x' : 'y')), // compared natively (long)
      Array.from({ length: 4 }, (_, i) => 'g'.repeat(2048 - (i % 2))),
    ];
    for (const families of batches) {
      const modifications = families.map((family, i) => ({
        family,
        key: Buffer.from(`k${i}`),
        value: Buffer.alloc(i % 3, i),
        ttlMs: i % 4 === 3 ? '60000' : '0',
        ...(i % 5 === 4 ? { condition: { kind: 'VERSION', segmentId: i % 10 === 4 ? '7' : '17', sequence: String(i) } } : {}),
      }));
      const keys = families.map((family, i) => ({ family, key: Buffer.from([i]) }));
      const req = { requests: [{ update: { segmentId: '7', modifications } }, { get: { segmentId: '7', keys } }, { update: { segmentId: '8', modifications: modifications.slice().reverse() } }] };
      const wire = service.Execute.requestSerialize(req);
      const decoded = decodeExecuteRequest(wire);
      expect(asLoaded(decoded)).toStrictEqual(service.Execute.requestDeserialize(wire));
      expect((decoded.requests[0].update as { modifications: { family: string }[] }).modifications.map((m) => m.family)).toEqual(families);
    }
  });

  it('decodes repeated family bytes that are not valid UTF-8 exactly like the loader', () => {
    // Two modifications, each: family = ff fe 61 (invalid UTF-8), key "k".
    const modification = Buffer.from([0x12, 0x08, 0x12, 0x03, 0xff, 0xfe, 0x61, 0x1a, 0x01, 0x6b]);
    const update = Buffer.concat([Buffer.from([0x0a, 0x01, 0x37]), modification, modification]);
    const wire = Buffer.concat([Buffer.from([0x0a, update.length + 2, 0x0a, update.length]), update]);
    const decoded = decodeExecuteRequest(wire);
    expect(asLoaded(decoded)).toStrictEqual(service.Execute.requestDeserialize(wire));
    expect((decoded.requests[0].update as { modifications: unknown[] }).modifications).toHaveLength(2);
  });

  it('skips unknown fields inside modifications and conditions, and rejects a field running past its modification', () => {
    // Modification: field 15 (varint 1), family "f", condition { field 14 (bytes "x"), kind VERSION, segment "3" }, key "k".
    const modification = Buffer.from([0x78, 0x01, 0x12, 0x01, 0x66, 0x2a, 0x08, 0x72, 0x01, 0x78, 0x08, 0x02, 0x12, 0x01, 0x33, 0x1a, 0x01, 0x6b]);
    const update = Buffer.concat([Buffer.from([0x12, modification.length]), modification, Buffer.from([0x12, modification.length]), modification]);
    const wire = Buffer.concat([Buffer.from([0x0a, update.length + 2, 0x0a, update.length]), update]);
    expect(asLoaded(decodeExecuteRequest(wire))).toStrictEqual(service.Execute.requestDeserialize(wire));
    // The first modification claims one byte fewer: its key's length now runs past it (but not past the message).
    const short = Buffer.from(wire);
    short[5] = modification.length - 1;
    expect(() => decodeExecuteRequest(short)).toThrow(/truncated/);
  });

  it('encodes update sequences (first sequence and the earlier list) to exactly the bytes of the loader: decimals, empty, long and non-ASCII ones', () => {
    const sequences = ['1', '', '123456', '18446744073709551615', '9'.repeat(32), '9'.repeat(33), 'é', '12é', '１２', '𝄞'.repeat(16), 'x'.repeat(200)];
    // (An empty first sequence is left out, as proto3 leaves out defaults; protobufjs writes it.)
    const firsts = sequences.filter((s) => s !== '').map((firstSequence) => ({ update: { sequences: [], firstSequence } }));
    const res = { responses: [{ update: { sequences } }, { update: { sequences: sequences.slice().reverse(), firstSequence: '42' } }, ...firsts] } as unknown as ExecuteResponse;
    expect(encodeExecuteResponse(res).equals(service.Execute.responseSerialize(res))).toBe(true);
    const msg = { id: 9, response: res, error: null, iterate: null };
    expect(encodeExecuteStreamResponse(msg).equals(service.ExecuteStream.responseSerialize(msg))).toBe(true);
  });

  it('skips unknown fields of every wire type in an ExecuteStreamRequest and the request in it, exactly like the loader', () => {
    const unknown = UNKNOWN_FIELDS;
    const request = service.Execute.requestSerialize({ requests: [{ update: { segmentId: '1', modifications: [{ key: Buffer.from('k'), value: Buffer.from('v') }] } }] });
    const iterate = service.Iterate.requestSerialize({ segmentId: '5', maxItems: 3 });
    const id = Buffer.from([0x08, 0x07]);
    for (const wire of [
      Buffer.concat([unknown, id, unknown, lengthDelimited(2, Buffer.concat([unknown, request, unknown])), unknown]),
      Buffer.concat([id, unknown, lengthDelimited(3, Buffer.concat([unknown, iterate])), unknown]),
    ]) {
      const { bytes, ...decoded } = decodeExecuteStreamRequest(wire) as Exclude<ReturnType<typeof decodeExecuteStreamRequest>, MalformedStreamMessage>;
      expect(bytes).toBe(wire.length);
      expect(asLoaded(decoded)).toStrictEqual(service.ExecuteStream.requestDeserialize(wire));
    }
  });
});
