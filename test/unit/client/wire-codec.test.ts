import { describe, expect, it } from 'vitest';
import { ClientExecuteStreamRequest, ClientSubRequest, encodeExecuteRequest, encodeExecuteStreamRequest, getKeyBytes, subRequestBytes } from '../../../client/internal/wire-codec';
import { ClientExecuteResponse, decodeExecuteResponse, decodeExecuteStreamResponse, decodeIteratePage, PageItemBuilder } from '../../../client/internal/wire-decoder';
import { kvtPackage } from '../../../proto/load';
import type { Entry, ExecuteRequest, IterateResponse } from '../../../proto/messages';
import { UpdateEncoder } from '../../../client/internal/update-encoder';
import { MODIFICATION_TYPES } from '../../../proto/enums';
import { bytes, lengthDelimited, messageType, randomMessage, rng, UNKNOWN_FIELDS } from '../../harness/random-messages';

const service = kvtPackage().SegmentStore.service;

/** `kvt.v1.<type>` encoded by protobufjs from the loaded .proto. */
const encode = (type: string, message: Record<string, unknown>): Buffer => Buffer.from(messageType(type).encode(message).finish());

/** Rebuilds the loader's Entry from the ranges decodeIteratePage hands out. */
const asEntry: PageItemBuilder<Entry> = (b, ks, ke, vs, ve, sequence) => ({ found: true, key: Buffer.from(b.subarray(ks, ke)), value: Buffer.from(b.subarray(vs, ve)), sequence });

/** What the loader makes of an IterateResponse, in decodeIteratePage's terms. */
function loaderPage(wire: Buffer): { items: Entry[]; done: boolean; lastKey: Uint8Array | undefined; bytes: number } {
  const res = service.Iterate.responseDeserialize(wire) as IterateResponse;
  // Iterate entries are found by definition: the page builder does not read the flag.
  const items = res.items.map((e) => ({ ...e, found: true }));
  const bytes = items.reduce((n, e) => n + e.key.length + e.value.length, 0);
  return { items, done: res.done, lastKey: items.length ? items[items.length - 1].key : undefined, bytes };
}

/**
 * A random ExecuteStreamRequest as the client sends one: an Execute, or else an Iterate (never both,
 * never neither); every other field as it came.
 */
function clientStreamRequest(rand: () => number): ClientExecuteStreamRequest {
  const msg = randomMessage(rand, 'ExecuteStreamRequest');
  if (msg.request) delete msg.iterate;
  else {
    delete msg.request;
    msg.iterate ??= randomMessage(rand, 'IterateRequest');
  }
  return msg as unknown as ClientExecuteStreamRequest;
}

// The random messages set every field of every message the codecs handle (their fields are walked
// from the loaded .proto): a field added there and not handled here fails these tests.
/** `response` with the iterator pages (kept as bytes by the client) decoded by the loader, to compare with the loader's. */
function withPagesDecoded(response: ClientExecuteResponse): unknown {
  return { responses: response.responses.map((r) => (r.iterate ? { ...r, iterate: service.Iterate.responseDeserialize(r.iterate) } : r)) };
}

describe('client wire codecs', () => {
  it('encodes ExecuteRequest to bytes the loader decodes to the same message', () => {
    const rand = rng(3);
    for (let i = 0; i < 300; i++) {
      const req = randomMessage(rand, 'ExecuteRequest') as unknown as ExecuteRequest;
      const ours = encodeExecuteRequest(req);
      expect(service.Execute.requestDeserialize(ours)).toStrictEqual(service.Execute.requestDeserialize(service.Execute.requestSerialize(req)));
    }
  });

  it('decodes ExecuteResponse exactly like the loader, keeping an iterator page as its bytes', () => {
    const rand = rng(5);
    let pages = 0;
    for (let i = 0; i < 300; i++) {
      const wire = service.Execute.responseSerialize(randomMessage(rand, 'ExecuteResponse'));
      const ours = decodeExecuteResponse(wire);
      pages += ours.responses.filter((r) => r.iterate).length;
      expect(withPagesDecoded(ours)).toStrictEqual(service.Execute.responseDeserialize(wire));
    }
    expect(pages).toBeGreaterThan(0);
  });

  it('decodes IterateResponse into page items exactly like the loader, and rejects truncated input', () => {
    const rand = rng(9);
    for (let i = 0; i < 200; i++) {
      const wire = service.Iterate.responseSerialize(randomMessage(rand, 'IterateResponse'));
      expect(decodeIteratePage(wire, asEntry)).toStrictEqual(loaderPage(wire));
    }
    const wire = service.Iterate.responseSerialize({ items: [{ found: true, key: Buffer.from('key'), value: Buffer.from('v'), sequence: '1' }], done: true });
    expect(() => decodeIteratePage(wire.subarray(0, 4), asEntry)).toThrow(/truncated/);
  });

  it('hands the last key out as a copy that does not pin the response', () => {
    const wire = service.Iterate.responseSerialize({
      items: [
        { found: true, key: Buffer.from('a'), sequence: '1' },
        { found: true, key: Buffer.from('bb'), sequence: '2' },
      ],
      done: false,
    });
    const page = decodeIteratePage(wire, asEntry);
    expect(page.lastKey).toEqual(Buffer.from('bb'));
    wire.fill(0);
    expect(page.lastKey).toEqual(Buffer.from('bb'));
  });

  it('decodes sequences that are not canonical decimals of up to 15 digits exactly like the loader', () => {
    const sequences = ['0', '7', '007', '0x1', '12a', '-1', '+5', '1e3', ' 1', '１２', '999999999999999', '1000000000000000', '9007199254740993', '9999999999999999', '18446744073709551615', '', 'é'];
    const wire = service.Execute.responseSerialize({ responses: [{ update: { sequences } }, ...sequences.map((firstSequence) => ({ update: { firstSequence } }))] });
    expect(decodeExecuteResponse(wire)).toStrictEqual(service.Execute.responseDeserialize(wire));
    const entries = sequences.map((sequence) => ({ found: true, key: Buffer.from('k'), value: Buffer.alloc(0), sequence }));
    const iterate = service.Iterate.responseSerialize({ items: entries, done: false });
    expect(decodeIteratePage(iterate, asEntry)).toStrictEqual(loaderPage(iterate));
  });

  it('encodes ExecuteStreamRequest to bytes the loader decodes to the same message', () => {
    const rand = rng(21);
    for (let i = 0; i < 300; i++) {
      const msg = clientStreamRequest(rand);
      expect(service.ExecuteStream.requestDeserialize(encodeExecuteStreamRequest(msg))).toStrictEqual(service.ExecuteStream.requestDeserialize(service.ExecuteStream.requestSerialize(msg)));
    }
  });

  it('decodes ExecuteStreamResponse exactly like the loader, keeping a page as its bytes', () => {
    const rand = rng(23);
    for (let i = 0; i < 300; i++) {
      const wire = service.ExecuteStream.responseSerialize(randomMessage(rand, 'ExecuteStreamResponse'));
      const ours = decodeExecuteStreamResponse(wire);
      const loader = service.ExecuteStream.responseDeserialize(wire) as { iterate: unknown };
      expect({ ...ours, response: ours.response && withPagesDecoded(ours.response), iterate: ours.iterate && service.Iterate.responseDeserialize(ours.iterate) }).toStrictEqual(loader);
    }
  });

  it('writes the request of an ExecuteStreamRequest in place: exactly the bytes of the ExecuteRequest, batches already encoded included', () => {
    const rand = rng(29);
    for (let i = 0; i < 100; i++) {
      const batches = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, b) => {
        const family = ['bf-3-12', '', 'é-ü', 'f'.repeat(40)][b % 4];
        const encoder = new UpdateEncoder(family, 20);
        const objects = Array.from({ length: 1 + Math.floor(rand() * 20) }, (_, k) => ({ type: 'PUT' as const, family, key: Buffer.from(`k${k}`), value: bytes(rand, 150), ttlMs: '0' }));
        for (const m of objects) encoder.add(MODIFICATION_TYPES.PUT, m.key, m.value, undefined, m.ttlMs);
        return { segmentId: String(40 + b), encoded: encoder.finish(), objects };
      });
      const request = { requests: batches.map((b) => ({ update: { segmentId: b.segmentId, modifications: b.encoded } })) };
      const plain = { requests: batches.map((b) => ({ update: { segmentId: b.segmentId, modifications: b.objects } })) } as unknown as ExecuteRequest;
      const id = i % 5 === 0 ? 0 : Math.floor(rand() * 2 ** 32);
      const ours = encodeExecuteStreamRequest({ id, request });
      const inner = encodeExecuteRequest(request);
      expect(ours.subarray(ours.length - inner.length).equals(inner)).toBe(true);
      expect(service.ExecuteStream.requestDeserialize(ours)).toStrictEqual(service.ExecuteStream.requestDeserialize(service.ExecuteStream.requestSerialize({ id, request: plain })));
    }
  });

  it('encodes ASCII, non-ASCII and long segment ids and families to exactly the bytes of the loader', () => {
    const strings = ['7', '18446744073709551615', 'bf-3-12', 'x'.repeat(32), 'x'.repeat(33), 'é-ü', '𝄞x', '１２', 'y'.repeat(300)];
    const req = { requests: strings.map((segmentId, i) => ({ get: { segmentId, keys: strings.map((family) => ({ family, key: Buffer.from([i]) })) } })) };
    expect(encodeExecuteRequest(req).equals(service.Execute.requestSerialize(req))).toBe(true);
  });

  it('skips unknown fields of every wire type at every level of a response, exactly like the loader', () => {
    const entry = (key: string, value: string, sequence: string): Buffer =>
      Buffer.concat([UNKNOWN_FIELDS, encode('Entry', { found: true, key: Buffer.from(key), value: Buffer.from(value), sequence }), UNKNOWN_FIELDS]);
    const page = Buffer.concat([UNKNOWN_FIELDS, lengthDelimited(1, entry('a', '1', '5')), UNKNOWN_FIELDS, lengthDelimited(1, entry('bb', '', '6')), Buffer.from([0x10, 0x01]), UNKNOWN_FIELDS]);
    expect(decodeIteratePage(page, asEntry)).toStrictEqual(loaderPage(page));
    const update = Buffer.concat([UNKNOWN_FIELDS, lengthDelimited(1, Buffer.from('3')), UNKNOWN_FIELDS, lengthDelimited(2, Buffer.from('4')), UNKNOWN_FIELDS]);
    const error = Buffer.concat([UNKNOWN_FIELDS, encode('Error', { code: 'NO_SUCH_KEY', message: 'm', index: 3, segmentId: '7' }), UNKNOWN_FIELDS]);
    const sub = (member: number, payload: Buffer): Buffer => lengthDelimited(1, Buffer.concat([UNKNOWN_FIELDS, lengthDelimited(member, payload), UNKNOWN_FIELDS]));
    const response = Buffer.concat([
      UNKNOWN_FIELDS,
      sub(1, update),
      sub(2, Buffer.concat([UNKNOWN_FIELDS, lengthDelimited(1, entry('k', 'v', '9')), UNKNOWN_FIELDS])),
      sub(3, error),
      sub(4, page),
      UNKNOWN_FIELDS,
    ]);
    expect(withPagesDecoded(decodeExecuteResponse(response))).toStrictEqual(service.Execute.responseDeserialize(response));
    const stream = Buffer.concat([
      UNKNOWN_FIELDS,
      Buffer.from([0x08, 0x07]),
      UNKNOWN_FIELDS,
      lengthDelimited(2, response),
      UNKNOWN_FIELDS,
      lengthDelimited(3, error),
      lengthDelimited(4, page),
      UNKNOWN_FIELDS,
    ]);
    const ours = decodeExecuteStreamResponse(stream);
    expect({ ...ours, response: ours.response && withPagesDecoded(ours.response), iterate: ours.iterate && service.Iterate.responseDeserialize(ours.iterate) }).toStrictEqual(
      service.ExecuteStream.responseDeserialize(stream),
    );
    // An unknown fixed64 or fixed32 field running past the end of the message, or of the entry it is in.
    for (const cut of [Buffer.from([0x79, 1, 2, 3, 4, 5, 6, 7]), Buffer.from([0x75, 1, 2, 3])]) {
      expect(() => decodeIteratePage(Buffer.concat([page, cut]), asEntry)).toThrow('truncated field');
      expect(() => decodeExecuteResponse(Buffer.concat([response, cut]))).toThrow('truncated field');
      expect(() => decodeExecuteStreamResponse(Buffer.concat([stream, cut]))).toThrow('truncated field');
      expect(() => decodeIteratePage(lengthDelimited(1, Buffer.concat([encode('Entry', { key: Buffer.from('k') }), cut])), asEntry)).toThrow('truncated field');
    }
    // Fields 3 and 4 are unknown in an ExecuteResponse: they are not the stream message's error and page.
    const nested = Buffer.concat([Buffer.from([0x08, 0x07]), lengthDelimited(2, Buffer.concat([response, lengthDelimited(3, error), lengthDelimited(4, page)]))]);
    expect(decodeExecuteStreamResponse(nested)).toMatchObject({ id: 7, error: null, iterate: null });
    expect(service.ExecuteStream.responseDeserialize(nested)).toMatchObject({ id: 7, error: null, iterate: null });
  });

  it('names the member of a SubResponse as the loader does when several are on the wire: the highest field number', () => {
    const update = lengthDelimited(1, lengthDelimited(2, Buffer.from('4')));
    const error = lengthDelimited(3, encode('Error', { code: 'NO_SUCH_KEY' }));
    const get = lengthDelimited(2, Buffer.alloc(0));
    for (const members of [
      [update, error],
      [error, update],
      [get, update],
      [update, get, error],
    ]) {
      const wire = lengthDelimited(1, Buffer.concat(members));
      expect(decodeExecuteResponse(wire)).toStrictEqual(service.Execute.responseDeserialize(wire));
    }
  });

  it('counts in subRequestBytes and getKeyBytes exactly the bytes a sub-request and a get key take, at the 1-, 2- and 3-byte length boundaries', () => {
    const lengths = [0, 1, 126, 127, 128, 16_382, 16_383, 16_384];
    for (const familyLength of [0, 1, 127, 128]) {
      const family = 'f'.repeat(familyLength);
      for (const keyLength of lengths) {
        const key = Buffer.alloc(keyLength, 0x6b);
        const one: ClientSubRequest = { get: { segmentId: '3', keys: [{ family, key }] } };
        const two: ClientSubRequest = {
          get: {
            segmentId: '3',
            keys: [
              { family, key },
              { family, key },
            ],
          },
        };
        const label = `family ${familyLength}, key ${keyLength}`;
        expect(subRequestBytes(one), label).toBe(encodeExecuteRequest({ requests: [one] }).length);
        // A key's field in a GetRequest: tag, length and the KeyRef, default values left out.
        expect(getKeyBytes(familyLength, keyLength), label).toBe(lengthDelimited(2, encode('KeyRef', { family: family || undefined, key: keyLength ? key : undefined })).length);
        expect(subRequestBytes(two), label).toBe(encodeExecuteRequest({ requests: [two] }).length);
      }
    }
  });
});
