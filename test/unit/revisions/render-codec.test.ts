import { describe, expect, it } from 'vitest';
import { MAX_VALUE_LENGTH, ServiceError } from '../../../client';
import { bodiesOf, CHUNK_BYTES, decodeRecord, encodeRender } from '../../../client/revisions/render-codec';
import { checkContent } from '../../../client/revisions/render-input';

describe('render records', () => {
  it('keeps a render that fits one value inline, bodies and all', () => {
    const content = checkContent('<p>hi</p>', { 'content-type': 'text/html' }, { 'data-parsoid': Buffer.from([1, 2, 3]), empty: '' });
    const encoded = encodeRender(content, 0);
    expect([encoded.upload, encoded.chunks]).toEqual([null, []]);
    const header = decodeRecord(encoded.record);
    expect([header.expiresAt, header.headers, header.upload, header.chunkCount]).toEqual([0, { 'content-type': 'text/html' }, null, 0]);
    expect(bodiesOf(header, encoded.record, header.bodyOffset)).toEqual({ value: '<p>hi</p>', parts: { 'data-parsoid': Buffer.from([1, 2, 3]), empty: '' } });
  });

  it('cuts the bodies of a render over one value into full chunks and a last one, and names them in the record', () => {
    const value = Buffer.alloc(MAX_VALUE_LENGTH, 1);
    const content = checkContent(value, {}, { tail: 'x'.repeat(100) });
    const encoded = encodeRender(content, 1234);
    expect(encoded.upload).toHaveLength(8);
    expect(encoded.chunks.map((c) => c.length)).toEqual([CHUNK_BYTES, 100]);
    const header = decodeRecord(encoded.record);
    expect([header.expiresAt, header.chunkCount, header.bodyBytes, header.upload?.equals(encoded.upload!)]).toEqual([1234, 2, MAX_VALUE_LENGTH + 100, true]);
    const bodies = bodiesOf(header, Buffer.concat(encoded.chunks), 0);
    expect((bodies.value as Buffer).equals(value)).toBe(true);
    expect(bodies.parts.tail).toBe('x'.repeat(100));
  });

  it('refuses a value that is not a render record with ServiceError SERVICE_ERROR', () => {
    for (const bad of [Buffer.from('hello world, not a record'), Buffer.alloc(3)]) {
      let err: unknown;
      try {
        decodeRecord(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code).toBe('SERVICE_ERROR');
    }
  });
});
