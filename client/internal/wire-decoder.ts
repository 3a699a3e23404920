/**
 * Hand-written protobuf decoders of the segment store's answers on the client side: `ExecuteResponse`
 * (alone or in an `ExecuteStreamResponse`) and `IterateResponse` (straight into the iterator's items).
 * They produce exactly what `proto/load.ts` produces (camelCase, enums as names, uint64 as strings,
 * bytes as Buffer, defaults filled in, the oneof's virtual field); the equivalence is tested against
 * the loader in test/unit/client/wire-codec.test.ts. Why they are hand-written, and the encoders they
 * pair with, are in wire-codec.ts.
 *
 * One cursor per message and plain offsets for nested messages: no reader object per field or entry.
 * Errors and semantics are those of proto/wire.ts's Reader.
 */
import type { Entry, ExecuteStreamResponse, SubResponse, UpdateResponse } from '../../proto/messages';

const EMPTY: Buffer = Buffer.alloc(0);

/** A read position in one message; nested messages are read by the same cursor up to their end offset. */
class Cursor {
  pos = 0;
  private readonly arrayBuffer: ArrayBufferLike;
  private readonly base: number;

  constructor(readonly buf: Buffer) {
    this.arrayBuffer = buf.buffer;
    this.base = buf.byteOffset;
  }

  /** A varint as a JS number (uint32 range is exact; int32 negatives come back as in protobufjs). */
  varint(end: number): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= end) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      if (shift < 32) result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new Error('varint too long');
    }
  }

  /** Reads the length prefix of a length-delimited field; returns the end of its payload (pos is at its start). */
  field(end: number): number {
    const len = this.varint(end) >>> 0;
    if (this.pos + len > end) throw new Error('truncated field');
    return this.pos + len;
  }

  /** A view of a bytes field (Buffer.from of the ArrayBuffer: `subarray` detours through the Buffer constructor). */
  bytes(end: number): Buffer {
    const to = this.field(end);
    const from = this.pos;
    this.pos = to;
    return to === from ? EMPTY : Buffer.from(this.arrayBuffer, this.base + from, to - from);
  }

  string(end: number): string {
    const to = this.field(end);
    const from = this.pos;
    this.pos = to;
    return to === from ? '' : this.buf.toString('utf8', from, to);
  }

  /**
   * A string that is nearly always a canonical decimal (a uint64 sequence): those of up to 15 digits
   * are read as a number, whose decimal form is the same text, which is cheaper than a native UTF-8
   * decode for such short strings. Anything else is decoded as UTF-8.
   */
  decimal(end: number): string {
    const to = this.field(end);
    const from = this.pos;
    this.pos = to;
    const buf = this.buf;
    const n = to - from;
    if (n === 0) return '';
    if (n > 15 || (buf[from] === 0x30 && n > 1)) return buf.toString('utf8', from, to);
    let value = 0;
    for (let i = from; i < to; i++) {
      const digit = buf[i] - 0x30;
      if (digit < 0 || digit > 9) return buf.toString('utf8', from, to);
      value = value * 10 + digit;
    }
    return String(value);
  }

  skip(wireType: number, end: number): void {
    if (wireType === 0) this.varint(end);
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.pos = this.field(end);
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
    if (this.pos > end) throw new Error('truncated field');
  }
}

/** An `Entry` ending at `end`. */
function decodeEntry(c: Cursor, end: number): Entry {
  const e: Entry = { found: false, key: EMPTY, value: EMPTY, sequence: '' };
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 0)) e.found = c.varint(end) !== 0;
    else if (tag === ((2 << 3) | 2)) e.key = c.bytes(end);
    else if (tag === ((3 << 3) | 2)) e.value = c.bytes(end);
    else if (tag === ((4 << 3) | 2)) e.sequence = c.decimal(end);
    else c.skip(tag & 7, end);
  }
  return e;
}

/** Builds one item of a page from an entry's key and value ranges in the response and its sequence. */
export type PageItemBuilder<T> = (buf: Buffer, keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: string) => T;

/** An `IterateResponse` decoded straight into the caller's items. */
export interface IteratePage<T> {
  items: T[];
  done: boolean;
  /** A copy of the last entry's key (the resume position), undefined when there are no entries. */
  lastKey: Buffer | undefined;
  /** Key and value bytes of the page's entries. */
  bytes: number;
}

/** Where one entry of a page lies in the response: its key and value ranges, and its sequence. */
interface EntryRanges {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
  sequence: string;
}

/** Reads the `Entry` ending at `end` into `r` (one object per page, reused for each entry), without views of its key and value. */
function readEntryRanges(c: Cursor, end: number, r: EntryRanges): void {
  r.keyStart = 0;
  r.keyEnd = 0;
  r.valueStart = 0;
  r.valueEnd = 0;
  r.sequence = '';
  while (c.pos < end) {
    const t = c.varint(end);
    if (t === ((2 << 3) | 2)) {
      r.keyEnd = c.field(end);
      r.keyStart = c.pos;
      c.pos = r.keyEnd;
    } else if (t === ((3 << 3) | 2)) {
      r.valueEnd = c.field(end);
      r.valueStart = c.pos;
      c.pos = r.valueEnd;
    } else if (t === ((4 << 3) | 2)) r.sequence = c.decimal(end);
    else c.skip(t & 7, end);
  }
}

/**
 * Decodes an `IterateResponse` into `build(…)` of each entry, without an intermediate Entry object or
 * key and value views (iterators hand the ranges to the serializers' `deserializeFrom`).
 * Its items are what the loader decodes, `build` applied (tested against the loader).
 */
export function decodeIteratePage<T>(buf: Buffer, build: PageItemBuilder<T>): IteratePage<T> {
  const c = new Cursor(buf);
  const end = buf.length;
  const page: IteratePage<T> = { items: [], done: false, lastKey: undefined, bytes: 0 };
  // After the loop it holds the last entry's ranges: the resume position.
  const r: EntryRanges = { keyStart: 0, keyEnd: 0, valueStart: 0, valueEnd: 0, sequence: '' };
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((2 << 3) | 0)) {
      page.done = c.varint(end) !== 0;
      continue;
    }
    if (tag !== ((1 << 3) | 2)) {
      c.skip(tag & 7, end);
      continue;
    }
    readEntryRanges(c, c.field(end), r);
    page.items.push(build(buf, r.keyStart, r.keyEnd, r.valueStart, r.valueEnd, r.sequence));
    page.bytes += r.keyEnd - r.keyStart + (r.valueEnd - r.valueStart);
  }
  if (page.items.length > 0) page.lastKey = Buffer.from(buf.subarray(r.keyStart, r.keyEnd));
  return page;
}

/** An UpdateResponse: the first sequence (2), or the earlier stores' repeated sequences (1). */
function decodeUpdate(c: Cursor, end: number): UpdateResponse {
  const out: UpdateResponse = { sequences: [], firstSequence: '' };
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((2 << 3) | 2)) out.firstSequence = c.decimal(end);
    else if (tag === ((1 << 3) | 2)) out.sequences.push(c.decimal(end));
    else c.skip(tag & 7, end);
  }
  return out;
}

/** A GetResponse: its only field (1) is the repeated Entry. */
function decodeEntries(c: Cursor, end: number): Entry[] {
  const out: Entry[] = [];
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 2)) out.push(decodeEntry(c, c.field(end)));
    else c.skip(tag & 7, end);
  }
  return out;
}

function decodeError(c: Cursor, end: number): NonNullable<SubResponse['error']> {
  const e = { code: '', message: '', index: 0, segmentId: '' };
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 2)) e.code = c.string(end);
    else if (tag === ((2 << 3) | 2)) e.message = c.string(end);
    else if (tag === ((3 << 3) | 0)) e.index = c.varint(end);
    else if (tag === ((4 << 3) | 2)) e.segmentId = c.string(end);
    else c.skip(tag & 7, end);
  }
  return e;
}

/** A `SubResponse` as the client reads it: an iterator page stays undecoded (decodeIteratePage). */
export type ClientSubResponse = Omit<SubResponse, 'iterate'> & { iterate?: Buffer | null };
/** An `ExecuteResponse` as the client reads it. */
export interface ClientExecuteResponse {
  responses: ClientSubResponse[];
}

function decodeSubResponse(c: Cursor, end: number): ClientSubResponse {
  const s: ClientSubResponse = {};
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 2)) s.update = decodeUpdate(c, c.field(end));
    else if (tag === ((2 << 3) | 2)) s.get = { entries: decodeEntries(c, c.field(end)) };
    else if (tag === ((3 << 3) | 2)) s.error = decodeError(c, c.field(end));
    else if (tag === ((4 << 3) | 2)) s.iterate = c.bytes(end);
    else c.skip(tag & 7, end);
  }
  // The loader names the set member of the oneof; with several on the wire, the last field number wins.
  if (s.iterate) s.response = 'iterate';
  else if (s.error) s.response = 'error';
  else if (s.get) s.response = 'get';
  else if (s.update) s.response = 'update';
  return s;
}

/** Decodes an `ExecuteResponse` exactly as the loader would, except that an iterator page stays bytes. */
export function decodeExecuteResponse(buf: Buffer): ClientExecuteResponse {
  const c = new Cursor(buf);
  const end = buf.length;
  const responses: ClientSubResponse[] = [];
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 2)) responses.push(decodeSubResponse(c, c.field(end)));
    else c.skip(tag & 7, end);
  }
  return { responses };
}

/** An `ExecuteStreamResponse` as the client reads it: an Iterate page stays undecoded (decodeIteratePage). */
export type ClientStreamResponse = Omit<ExecuteStreamResponse, 'iterate' | 'response'> & { response: ClientExecuteResponse | null; iterate: Buffer | null };

/** Decodes an `ExecuteStreamResponse` exactly as the loader would, except that `iterate` stays bytes. */
export function decodeExecuteStreamResponse(buf: Buffer): ClientStreamResponse {
  const c = new Cursor(buf);
  const end = buf.length;
  const msg: ClientStreamResponse = { id: 0, response: null, error: null, iterate: null };
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 0)) msg.id = c.varint(end) >>> 0;
    else if (tag === ((2 << 3) | 2)) {
      const to = c.field(end);
      msg.response = decodeExecuteResponse(buf.subarray(c.pos, to));
      c.pos = to;
    } else if (tag === ((3 << 3) | 2)) msg.error = decodeError(c, c.field(end));
    else if (tag === ((4 << 3) | 2)) msg.iterate = c.bytes(end);
    else c.skip(tag & 7, end);
  }
  return msg;
}
