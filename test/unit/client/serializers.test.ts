import { describe, expect, it } from 'vitest';
import { Serializers } from '../../../client';
import { rangeDeserializer, Serializer } from '../../../client/serializers';

describe('Serializers', () => {
  it('utf8 round-trips strings, including non-ASCII', () => {
    const bytes = Serializers.utf8.serialize('Grüße, ключ');
    expect(Buffer.from(bytes).toString('utf8')).toBe('Grüße, ключ');
    expect(Serializers.utf8.deserialize(bytes)).toBe('Grüße, ключ');
  });

  it('utf8 writes exactly the bytes of Buffer.from(text, "utf8"), on its short-ASCII path and off it', () => {
    const texts = [
      '',
      'k',
      'k000042',
      'a'.repeat(48),
      'a'.repeat(49),
      '\u007f',
      'x\u0080',
      'é',
      'a'.repeat(47) + 'ü',
      '😀',
      'a\ud800b',
      '\udc00',
      'page/Main_Page@12345',
      'ключ',
      'a'.repeat(48) + 'é',
      '\0\t\n',
    ];
    for (const text of texts) {
      const bytes = Serializers.utf8.serialize(text);
      expect(Buffer.from(bytes).equals(Buffer.from(text, 'utf8')), JSON.stringify(text)).toBe(true);
      expect(Serializers.utf8.deserialize(bytes)).toBe(Buffer.from(text, 'utf8').toString('utf8'));
    }
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

  it('deserializeFrom of each built-in reads a range exactly as deserialize reads a view of it', () => {
    const text = Buffer.from('xx{"k":["Grüße",1]}yy', 'utf8');
    const start = 2;
    const end = text.length - 2;
    for (const [name, s] of Object.entries(Serializers) as [string, Serializer<unknown>][]) {
      const from = s.deserializeFrom!(text, start, end);
      expect(from, name).toEqual(s.deserialize(text.subarray(start, end)));
      if (name === 'json')
        expect(() => s.deserializeFrom!(text, 3, 3)).toThrow(SyntaxError); // as deserialize of no bytes
      else expect(s.deserializeFrom!(text, 3, 3), `${name} empty`).toEqual(s.deserialize(text.subarray(3, 3)));
    }
    // bytes copies (a change of the response does not show), bytesView is a view (it does).
    const copy = Serializers.bytes.deserializeFrom!(text, start, end);
    const view = Serializers.bytesView.deserializeFrom!(text, start, end);
    text[start] = 0x41;
    expect(copy[0]).toBe(0x7b);
    expect(view[0]).toBe(0x41);
    expect(copy).not.toBeInstanceOf(Buffer);
  });

  it('reads ranges through deserialize when a custom serializer has no deserializeFrom', () => {
    const upper: Serializer<string> = { serialize: (v) => Buffer.from(v), deserialize: (b) => Buffer.from(b).toString().toUpperCase() };
    expect(rangeDeserializer(upper)(Buffer.from('--abc--'), 2, 5)).toBe('ABC');
  });
});
