/**
 * Protobuf wire-format primitives shared by the hand-written codecs of the client and the segment
 * store (client/internal/, segmentstore/service/): a reader over one message, the size arithmetic
 * of the encoders, their one varint writer and their string writer (the enum numbers: enums.ts).
 * The `.proto` files stay the contract; these only read, size and write what they define.
 */

const EMPTY: Buffer = Buffer.alloc(0);

/**
 * A cursor over one protobuf message. A nested message is read by the same cursor: {@link Reader.enter}
 * narrows it to the nested payload and {@link Reader.leave} widens it back (no reader object per
 * field or nested message).
 */
export class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    public end: number,
  ) {}

  /** A varint as a JS number (uint32 range is exact; int32 negatives come back as in protobufjs). */
  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      if (shift < 32) result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new Error('varint too long');
    }
  }

  /** Reads the length prefix of a length-delimited field: returns the end of its payload (pos is at its start). */
  field(): number {
    const len = this.varint() >>> 0;
    const start = this.pos;
    if (start + len > this.end) throw new Error('truncated field');
    return start + len;
  }

  /** A length-delimited field as a sub-reader. */
  sub(): Reader {
    const end = this.field();
    const start = this.pos;
    this.pos = end;
    return new Reader(this.buf, start, end);
  }

  /**
   * Narrows this reader to the payload of a length-delimited field (a nested message); returns the
   * end to hand to {@link Reader.leave} once the payload is read.
   */
  enter(): number {
    const end = this.field();
    const outer = this.end;
    this.end = end;
    return outer;
  }

  /** Widens the reader back to `outer` after the nested payload {@link Reader.enter} narrowed it to. */
  leave(outer: number): void {
    this.pos = this.end;
    this.end = outer;
  }

  /** A view of a bytes field (Buffer.from of the ArrayBuffer: cheaper than `subarray`, which detours through more checks). */
  bytes(): Buffer {
    const end = this.field();
    const start = this.pos;
    this.pos = end;
    return end === start ? EMPTY : Buffer.from(this.buf.buffer, this.buf.byteOffset + start, end - start);
  }

  string(): string {
    const end = this.field();
    const start = this.pos;
    this.pos = end;
    return end === start ? '' : this.buf.toString('utf8', start, end);
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.pos = this.field();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
    if (this.pos > this.end) throw new Error('truncated field');
  }

  more(): boolean {
    return this.pos < this.end;
  }
}

export function varintSize(n: number): number {
  if (n < 0) return 10; // negative int32: sign-extended to 64 bits
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/**
 * Writes varint `n` at `at`; returns the offset after it. `n` is a uint32, a safe non-negative
 * integer, or a negative int32, written as protobuf writes one: its two's complement over 64 bits,
 * 10 bytes (as {@link varintSize} counts it).
 */
export function writeVarint(buf: Buffer, at: number, n: number): number {
  if (n < 0) return writeNegativeVarint(buf, at, n);
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[at++] = n;
  return at;
}

/** A negative int32 as ten bytes: its low 32 bits, then the sign extension. */
function writeNegativeVarint(buf: Buffer, at: number, n: number): number {
  let lo = n >>> 0;
  for (let i = 0; i < 4; i++) {
    buf[at++] = (lo & 0x7f) | 0x80;
    lo >>>= 7;
  }
  buf[at++] = (lo & 0x0f) | 0x70 | 0x80;
  for (let i = 0; i < 4; i++) buf[at++] = 0xff;
  buf[at++] = 0x01;
  return at;
}

/** Tag + length prefix + payload of a length-delimited field. */
export function fieldSize(len: number): number {
  return 1 + varintSize(len) + len;
}

/** Strings up to this many UTF-16 units are written by a JS loop when ASCII (see {@link writeUtf8}). */
const SHORT_STRING = 32;

/**
 * Writes `s`, whose UTF-8 length is `len` (Buffer.byteLength), at `pos`; returns the position after
 * it. A short ASCII string (what sequences and ids are: decimals) is copied by a JS loop, much
 * cheaper than `buf.write`'s native call for a few bytes; anything else goes through `buf.write`.
 * The bytes are the same either way: only ASCII has as many UTF-8 bytes as UTF-16 units.
 */
export function writeUtf8(buf: Buffer, pos: number, s: string, len: number): number {
  if (len !== s.length || len > SHORT_STRING) return pos + buf.write(s, pos, len, 'utf8');
  for (let i = 0; i < len; i++) buf[pos + i] = s.charCodeAt(i);
  return pos + len;
}
