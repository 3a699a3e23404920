import { describe, expect, it } from 'vitest';
import * as protobuf from 'protobufjs';
import { Reader, varintSize, writeUtf8, writeVarint } from '../../../proto/wire';
import { UNKNOWN_FIELDS } from '../../harness/random-messages';

/** Strings of every kind writeUtf8 must write exactly as `Buffer.write` does. */
const STRINGS = [
  '',
  '0',
  '7',
  '123456',
  '18446744073709551615',
  'bf-3-12',
  'x'.repeat(32),
  'x'.repeat(33),
  'y'.repeat(300),
  'é',
  'é-ü',
  '𝄞x',
  '１２',
  '\u007f',
  '\u0080',
  '\uD800',
  'a\uDC00b',
  '0123456789012345678901234567890é',
];

describe('writeUtf8', () => {
  it('writes exactly the bytes of Buffer.write, for ASCII, non-ASCII, long strings and lone surrogates', () => {
    for (const s of STRINGS) {
      const len = Buffer.byteLength(s);
      const ours = Buffer.alloc(len + 4, 0xaa);
      const theirs = Buffer.alloc(len + 4, 0xaa);
      expect(writeUtf8(ours, 2, s, len)).toBe(2 + len);
      theirs.write(s, 2, len, 'utf8');
      expect(ours.equals(theirs), JSON.stringify(s)).toBe(true);
    }
  });
});

describe('writeVarint', () => {
  it('writes exactly the bytes of protobufjs, for uint32, larger safe integers and negative int32, as many as varintSize counts', () => {
    const values = [0, 1, 127, 128, 300, 16_383, 16_384, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 40, Number.MAX_SAFE_INTEGER, -1, -300, -(2 ** 31)];
    for (const n of values) {
      const ours = Buffer.alloc(13, 0xaa);
      const end = writeVarint(ours, 1, n);
      const w = protobuf.Writer.create();
      const theirs = (n < 0 ? w.int32(n) : n <= 0xffffffff ? w.uint32(n) : w.uint64(n)).finish();
      expect(ours.subarray(1, end), String(n)).toEqual(Buffer.from(theirs));
      expect(end - 1, String(n)).toBe(varintSize(n));
      expect(ours[end], String(n)).toBe(0xaa);
    }
  });
});

describe('Reader', () => {
  /** Field 1: a nested message holding field 1 (bytes "ab") and field 2 (varint 5); then field 2: string "zz". */
  const message = Buffer.from([0x0a, 0x06, 0x0a, 0x02, 0x61, 0x62, 0x10, 0x05, 0x12, 0x02, 0x7a, 0x7a]);

  it('reads a nested message in place between enter and leave, then goes on with the outer one', () => {
    const r = new Reader(message, 0, message.length);
    expect(r.varint()).toBe(0x0a);
    const outer = r.enter();
    expect([r.varint(), r.bytes()]).toEqual([0x0a, Buffer.from('ab')]);
    expect([r.varint(), r.varint(), r.more()]).toEqual([0x10, 5, false]);
    r.leave(outer);
    expect([r.varint(), r.string(), r.more()]).toEqual([0x12, 'zz', false]);
  });

  it('hands out bytes as Buffers viewing the message and empty fields as empty values', () => {
    // The message sits inside a larger buffer, as a gRPC message does.
    const buf = Buffer.from([7, 7, 0x0a, 0x00, 0x12, 0x00, 0x1a, 0x03, 1, 2, 3, 7]).subarray(2, 11);
    const r = new Reader(buf, 0, buf.length);
    r.varint();
    expect(r.bytes()).toStrictEqual(Buffer.alloc(0));
    r.varint();
    expect(r.string()).toBe('');
    r.varint();
    const view = r.bytes();
    expect(Buffer.isBuffer(view)).toBe(true);
    expect(view).toStrictEqual(Buffer.from([1, 2, 3]));
    buf[6] = 9;
    expect(view[0]).toBe(9);
  });

  it('rejects a field longer than what is left of the message or of the nested message it is in', () => {
    const truncated = Buffer.from([0x0a, 0x05, 0x61, 0x62]);
    for (const read of [(r: Reader) => r.bytes(), (r: Reader) => r.string(), (r: Reader) => r.enter(), (r: Reader) => r.sub(), (r: Reader) => r.skip(2)]) {
      const r = new Reader(truncated, 0, truncated.length);
      r.varint();
      expect(() => read(r)).toThrow('truncated field');
    }
    // The nested message is 2 bytes long, but its field claims 3: beyond the nested message, within the outer one.
    const overrun = Buffer.from([0x0a, 0x02, 0x0a, 0x03, 0x61, 0x62, 0x63]);
    const r = new Reader(overrun, 0, overrun.length);
    r.varint();
    r.enter();
    r.varint();
    expect(() => r.bytes()).toThrow('truncated field');
    const varint = Buffer.from([0x0a, 0x01, 0x80]);
    const v = new Reader(varint, 0, varint.length);
    v.varint();
    v.enter();
    expect(() => v.varint()).toThrow('truncated varint');
  });
});

describe('Reader.varint', () => {
  it('reads back every varint protobufjs writes as its low 32 bits, signed (what protobufjs reads as an int32)', () => {
    const values = [0, 1, 127, 128, 16_383, 16_384, 2 ** 21, 2 ** 28, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 35 + 300, 2 ** 40, Number.MAX_SAFE_INTEGER, -1, -300, -(2 ** 31)];
    for (const n of values) {
      const w = protobuf.Writer.create();
      const wire = Buffer.from((n < 0 ? w.int32(n) : n <= 0xffffffff ? w.uint32(n) : w.uint64(n)).finish());
      const r = new Reader(wire, 0, wire.length);
      expect(r.varint(), String(n)).toBe(Number(BigInt.asIntN(32, BigInt(n))));
      expect(r.more(), String(n)).toBe(false);
    }
  });

  it('refuses a varint of more than 10 bytes', () => {
    const eleven = Buffer.from([...Array<number>(10).fill(0x80), 0x01]);
    expect(() => new Reader(eleven, 0, eleven.length).varint()).toThrow('varint too long');
    const ten = Buffer.from([...Array<number>(9).fill(0x80), 0x01]);
    expect(new Reader(ten, 0, ten.length).varint()).toBe(0);
  });
});

describe('Reader length prefixes', () => {
  it('reads a length of 2^31 or more as unsigned, and refuses it as running past the message', () => {
    for (const len of [2 ** 31, 2 ** 32 - 1]) {
      const prefix = Buffer.from(protobuf.Writer.create().uint32(len).finish());
      const wire = Buffer.concat([prefix, Buffer.from('abc')]);
      for (const read of [(r: Reader) => r.bytes(), (r: Reader) => r.string(), (r: Reader) => r.sub()]) {
        expect(() => read(new Reader(wire, 0, wire.length)), String(len)).toThrow('truncated field');
      }
    }
  });

  it('reads fields whose length prefix takes 1, 2 and 3 bytes (lengths 127, 128, 16383, 16384)', () => {
    for (const len of [0, 127, 128, 16_383, 16_384]) {
      const payload = Buffer.alloc(len, 0x61);
      const wire = Buffer.from(protobuf.Writer.create().bytes(payload).uint32(7).finish());
      const r = new Reader(wire, 0, wire.length);
      expect(r.bytes().equals(payload), String(len)).toBe(true);
      expect(r.varint(), String(len)).toBe(7);
    }
  });
});

describe('Reader.skip', () => {
  /** Unknown fields of each wire type (fixed64 = 15, fixed32 = 14, a 10-byte varint = 13, bytes = 12), then field 1: varint 42. */
  const unknownThenKnown = Buffer.concat([
    UNKNOWN_FIELDS,
    Buffer.from(
      protobuf.Writer.create()
        .uint32((1 << 3) | 0)
        .uint32(42)
        .finish(),
    ),
  ]);

  it('skips unknown fields of every wire type by their own width', () => {
    const r = new Reader(unknownThenKnown, 0, unknownThenKnown.length);
    const seen: number[] = [];
    while (r.more()) {
      const tag = r.varint();
      if (tag >>> 3 === 1) seen.push(r.varint());
      else r.skip(tag & 7);
    }
    expect(seen).toEqual([42]);
  });

  it('refuses a fixed64 or fixed32 field running past the message, and wire types it does not read', () => {
    for (const [wireType, have] of [
      [1, 7],
      [5, 3],
    ]) {
      const wire = Buffer.alloc(have + 2, 0x08);
      const r = new Reader(wire, 0, have);
      expect(() => r.skip(wireType), String(wireType)).toThrow('truncated field');
    }
    for (const wireType of [3, 4, 6, 7]) {
      expect(() => new Reader(unknownThenKnown, 0, unknownThenKnown.length).skip(wireType)).toThrow(`unsupported wire type ${wireType}`);
    }
  });
});
