/**
 * Protobuf wire-format primitives shared by the hand-written codecs of the client and the segment
 * store (client/internal/wire-codec.ts, segmentstore/service/wire-codec.ts): a reader over one
 * message and the size arithmetic of the encoders. The `.proto` files stay the contract; these only
 * read and size what they define.
 */

const EMPTY: Buffer = Buffer.alloc(0);

/** A cursor over one protobuf message (or a length-delimited part of one). */
export class Reader {
  constructor(readonly buf: Buffer, public pos: number, readonly end: number) {}

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

  /** A length-delimited field as a sub-reader. */
  sub(): Reader {
    const len = this.varint() >>> 0;
    const start = this.pos;
    if (start + len > this.end) throw new Error('truncated field');
    this.pos = start + len;
    return new Reader(this.buf, start, start + len);
  }

  bytes(): Buffer {
    const r = this.sub();
    return r.end === r.pos ? EMPTY : this.buf.subarray(r.pos, r.end);
  }

  string(): string {
    const r = this.sub();
    return r.end === r.pos ? '' : this.buf.toString('utf8', r.pos, r.end);
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.sub();
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

/** Tag + length prefix + payload of a length-delimited field. */
export function fieldSize(len: number): number {
  return 1 + varintSize(len) + len;
}
