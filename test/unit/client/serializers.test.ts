import { describe, expect, it } from 'vitest';
import { Serializers } from '../../../client';

describe('Serializers', () => {
  it('utf8 round-trips strings, including non-ASCII', () => {
    const bytes = Serializers.utf8.serialize('Grüße, ключ');
    expect(Buffer.from(bytes).toString('utf8')).toBe('Grüße, ключ');
    expect(Serializers.utf8.deserialize(bytes)).toBe('Grüße, ключ');
  });

  it('utf8 rejects non-strings', () => {
    expect(() => Serializers.utf8.serialize(5 as unknown as string)).toThrow('the utf8 serializer takes strings, got number');
  });

  it('json round-trips values', () => {
    const value = { a: [1, 'two', null], b: { c: true } };
    expect(Serializers.json.deserialize(Serializers.json.serialize(value))).toEqual(value);
    expect(() => Serializers.json.serialize(undefined)).toThrow('the json serializer cannot encode undefined');
  });

  it('bytes passes bytes through and copies on read', () => {
    const bytes = new Uint8Array([0, 255, 7]);
    expect(Serializers.bytes.serialize(bytes)).toBe(bytes);
    const back = Serializers.bytes.deserialize(bytes);
    expect([...back]).toEqual([0, 255, 7]);
    expect(back).not.toBe(bytes);
    expect(() => Serializers.bytes.serialize('x' as unknown as Uint8Array)).toThrow('the bytes serializer takes Uint8Array, got string');
  });

  it('bytesView passes bytes through both ways, without a copy on read', () => {
    const message = Buffer.from([9, 0, 255, 7, 9]);
    const value = message.subarray(1, 4);
    const back = Serializers.bytesView.deserialize(value);
    expect([...back]).toEqual([0, 255, 7]);
    expect(back.buffer).toBe(message.buffer);
    expect(Serializers.bytesView.serialize(value)).toBe(value);
    expect(() => Serializers.bytesView.serialize(5 as unknown as Uint8Array)).toThrow('the bytes serializer takes Uint8Array, got number');
  });
});
