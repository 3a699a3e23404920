/**
 * Hand-written protobuf codecs for the client's hottest calls: encoding `ExecuteRequest` (alone or in
 * an `ExecuteStreamRequest`), decoding `ExecuteResponse` (alone or in an `ExecuteStreamResponse`) and
 * `IterateResponse` (straight into the iterator's items).
 *
 * Why: in the benchmark's client process the generic loader (protobufjs `fromObject` + `encode`, and
 * `decode` + `toObject` with defaults) was the largest cost per operation and per scanned entry. These
 * produce exactly what `proto/load.ts` produces (camelCase, enums as names, uint64 as strings, bytes as
 * Buffer, defaults filled in, the oneof's virtual field); the equivalence is tested against the loader
 * in test/unit/client/wire-codec.test.ts. The size arithmetic lives in proto/wire.ts, shared with the
 * segment store's codecs; decoding uses one cursor per message (no reader object per field or entry).
 * The table's own updates arrive with their modifications already encoded (update-encoder.ts) and are
 * copied as they are.
 */
import * as grpc from '@grpc/grpc-js';
import { kvtPackage } from '../../proto/load';
import type {
  Entry, ExecuteRequest, ExecuteResponse, ExecuteStreamResponse, GetRequest, IterateRequest, Modification, SubRequest, SubResponse, UpdateRequest, UpdateResponse,
} from '../../proto/messages';
import { fieldSize, varintSize, writeUtf8 } from '../../proto/wire';
import { EncodedModifications, MODIFICATION_TYPES } from './update-encoder';

const EMPTY: Buffer = Buffer.alloc(0);
const CONDITION_KINDS: Record<string, number> = { NONE: 0, NOT_EXISTS: 1, VERSION: 2 };

// ---- decoding ----
//
// One cursor per message and plain offsets for nested messages: no reader object per field or entry.
// Errors and semantics are those of proto/wire.ts's Reader.

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

/**
 * Decodes an `IterateResponse` into `build(…)` of each entry, without an intermediate Entry object or
 * key and value views (iterators hand the ranges to the serializers' `deserializeFrom`).
 * Its items are what the loader decodes, `build` applied (tested against the loader).
 */
export function decodeIteratePage<T>(buf: Buffer, build: PageItemBuilder<T>): IteratePage<T> {
  const c = new Cursor(buf);
  const end = buf.length;
  const page: IteratePage<T> = { items: [], done: false, lastKey: undefined, bytes: 0 };
  let lastStart = 0;
  let lastEnd = 0;
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
    const entryEnd = c.field(end);
    let ks = 0;
    let ke = 0;
    let vs = 0;
    let ve = 0;
    let sequence = '';
    while (c.pos < entryEnd) {
      const t = c.varint(entryEnd);
      if (t === ((2 << 3) | 2)) {
        ke = c.field(entryEnd);
        ks = c.pos;
        c.pos = ke;
      } else if (t === ((3 << 3) | 2)) {
        ve = c.field(entryEnd);
        vs = c.pos;
        c.pos = ve;
      } else if (t === ((4 << 3) | 2)) sequence = c.decimal(entryEnd);
      else c.skip(t & 7, entryEnd);
    }
    page.items.push(build(buf, ks, ke, vs, ve, sequence));
    page.bytes += ke - ks + (ve - vs);
    lastStart = ks;
    lastEnd = ke;
  }
  if (page.items.length > 0) page.lastKey = Buffer.from(buf.subarray(lastStart, lastEnd));
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

function decodeSubResponse(c: Cursor, end: number): SubResponse {
  const s: SubResponse = {};
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 2)) s.update = decodeUpdate(c, c.field(end));
    else if (tag === ((2 << 3) | 2)) s.get = { entries: decodeEntries(c, c.field(end)) };
    else if (tag === ((3 << 3) | 2)) s.error = decodeError(c, c.field(end));
    else c.skip(tag & 7, end);
  }
  // The loader names the set member of the oneof; with several on the wire, the last field number wins.
  if (s.error) s.response = 'error';
  else if (s.get) s.response = 'get';
  else if (s.update) s.response = 'update';
  return s;
}

/** Decodes an `ExecuteResponse` exactly as the loader would. */
export function decodeExecuteResponse(buf: Buffer): ExecuteResponse {
  const c = new Cursor(buf);
  const end = buf.length;
  const responses: SubResponse[] = [];
  while (c.pos < end) {
    const tag = c.varint(end);
    if (tag === ((1 << 3) | 2)) responses.push(decodeSubResponse(c, c.field(end)));
    else c.skip(tag & 7, end);
  }
  return { responses };
}

// ---- encoding: sizes first, then one allocation ----

function strLen(s: string | undefined): number {
  return s ? Buffer.byteLength(s) : 0;
}

class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  tagLen(tag: number, len: number): void {
    this.buf[this.pos++] = tag;
    this.varint(len);
  }

  bytes(tag: number, b: Uint8Array | undefined): void {
    if (!b || b.length === 0) return;
    this.tagLen(tag, b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  string(tag: number, s: string | undefined, len: number): void {
    if (!len) return;
    this.tagLen(tag, len);
    this.pos = writeUtf8(this.buf, this.pos, s!, len);
  }

  enumField(tag: number, n: number): void {
    if (!n) return;
    this.buf[this.pos++] = tag;
    this.varint(n);
  }
}

function enumNumber(names: Record<string, number>, v: unknown): number {
  if (typeof v === 'number') return v;
  return (typeof v === 'string' && names[v]) || 0;
}

type Cond = NonNullable<Modification['condition']>;

function conditionSize(c: Cond): number {
  const kind = enumNumber(CONDITION_KINDS, c.kind);
  return (kind ? 1 + varintSize(kind) : 0) + (c.segmentId ? fieldSize(strLen(c.segmentId)) : 0) + (c.sequence ? fieldSize(strLen(c.sequence)) : 0);
}

const blen = (b: Uint8Array | undefined): number => (b && b.length ? fieldSize(b.length) : 0);

function modificationSize(m: Partial<Modification>): number {
  const type = enumNumber(MODIFICATION_TYPES, m.type);
  return (type ? 1 + varintSize(type) : 0) + (m.family ? fieldSize(strLen(m.family)) : 0) + blen(m.key) + blen(m.value)
    + (m.condition ? fieldSize(conditionSize(m.condition)) : 0) + (m.ttlMs ? fieldSize(strLen(m.ttlMs)) : 0)
    + blen(m.rangeFrom) + blen(m.rangeTo) + blen(m.rangePrefix);
}

function writeModification(w: Writer, m: Partial<Modification>, size: number): void {
  w.tagLen((2 << 3) | 2, size);
  w.enumField((1 << 3) | 0, enumNumber(MODIFICATION_TYPES, m.type));
  w.string((2 << 3) | 2, m.family, strLen(m.family));
  w.bytes((3 << 3) | 2, m.key);
  w.bytes((4 << 3) | 2, m.value);
  if (m.condition) {
    const c = m.condition;
    w.tagLen((5 << 3) | 2, conditionSize(c));
    w.enumField((1 << 3) | 0, enumNumber(CONDITION_KINDS, c.kind));
    w.string((2 << 3) | 2, c.segmentId, strLen(c.segmentId));
    w.string((3 << 3) | 2, c.sequence, strLen(c.sequence));
  }
  w.string((6 << 3) | 2, m.ttlMs, strLen(m.ttlMs));
  w.bytes((7 << 3) | 2, m.rangeFrom);
  w.bytes((8 << 3) | 2, m.rangeTo);
  w.bytes((9 << 3) | 2, m.rangePrefix);
}

/** An update whose modifications were encoded when its batch was built (update-encoder.ts). */
export interface EncodedUpdateRequest {
  segmentId: string;
  modifications: EncodedModifications;
}

/** A sub-request as the client sends it: a get, or an update with encoded modifications. */
export type ClientSubRequest = { update: EncodedUpdateRequest; get?: undefined } | { get: GetRequest; update?: undefined };

/** An `ExecuteRequest` as the client sends it. */
export interface ClientExecuteRequest {
  requests: ClientSubRequest[];
}

type AnyUpdate = UpdateRequest | EncodedUpdateRequest;

/** Sizes of one SubRequest: its member's payload, and the payload of each of the member's items. */
interface SubSizes {
  member: number;
  items: number[];
}

const NO_ITEMS: number[] = [];

function subRequestSizes(s: SubRequest | ClientSubRequest): SubSizes {
  const body: AnyUpdate | GetRequest | null | undefined = s.update ?? s.get;
  if (!body) return { member: 0, items: NO_ITEMS };
  let member = body.segmentId ? fieldSize(strLen(body.segmentId)) : 0;
  const encoded = s.update?.modifications;
  if (encoded instanceof EncodedModifications) return { member: member + encoded.bytes.length, items: NO_ITEMS };
  const list: Partial<Modification & { family: string; key: Uint8Array }>[] = (s.update ? (s.update as UpdateRequest).modifications : s.get!.keys) ?? [];
  const items = new Array<number>(list.length);
  for (let i = 0; i < list.length; i++) {
    items[i] = s.update ? modificationSize(list[i]) : (list[i].family ? fieldSize(strLen(list[i].family)) : 0) + blen(list[i].key);
    member += fieldSize(items[i]);
  }
  return { member, items };
}

function writeSubRequest(w: Writer, s: SubRequest | ClientSubRequest, sizes: SubSizes): void {
  const body: AnyUpdate | GetRequest | null | undefined = s.update ?? s.get;
  w.tagLen((1 << 3) | 2, body ? fieldSize(sizes.member) : 0);
  if (!body) return;
  w.tagLen(s.update ? (1 << 3) | 2 : (2 << 3) | 2, sizes.member);
  w.string((1 << 3) | 2, body.segmentId, strLen(body.segmentId));
  if (s.update) {
    const mods = s.update.modifications;
    if (mods instanceof EncodedModifications) {
      w.buf.set(mods.bytes, w.pos);
      w.pos += mods.bytes.length;
      return;
    }
    const list = mods ?? [];
    for (let i = 0; i < list.length; i++) writeModification(w, list[i], sizes.items[i]);
    return;
  }
  const keys = s.get!.keys ?? [];
  for (let i = 0; i < keys.length; i++) {
    w.tagLen((2 << 3) | 2, sizes.items[i]);
    w.string((1 << 3) | 2, keys[i].family, strLen(keys[i].family));
    w.bytes((2 << 3) | 2, keys[i].key);
  }
}

/** An `ExecuteRequest` sized: its sub-requests, their sizes and its encoded length. */
interface SizedRequest {
  subs: (SubRequest | ClientSubRequest)[];
  sizes: SubSizes[];
  length: number;
}

function sizeExecuteRequest(req: ExecuteRequest | ClientExecuteRequest): SizedRequest {
  const subs: (SubRequest | ClientSubRequest)[] = req.requests ?? [];
  const sizes = subs.map(subRequestSizes);
  let length = 0;
  for (let i = 0; i < subs.length; i++) length += fieldSize(subs[i].update ?? subs[i].get ? fieldSize(sizes[i].member) : 0);
  return { subs, sizes, length };
}

function writeExecuteRequest(w: Writer, req: SizedRequest): void {
  for (let i = 0; i < req.subs.length; i++) writeSubRequest(w, req.subs[i], req.sizes[i]);
}

/** Encodes an `ExecuteRequest` (sub-requests hold an update or a get; default values are left out). */
export function encodeExecuteRequest(req: ExecuteRequest | ClientExecuteRequest): Buffer {
  const sized = sizeExecuteRequest(req);
  const w = new Writer(Buffer.allocUnsafe(sized.length));
  writeExecuteRequest(w, sized);
  return w.buf;
}

/** An `ExecuteStreamRequest` as the client sends it: an Execute or an Iterate. */
export type ClientExecuteStreamRequest = { id: number; request: ExecuteRequest | ClientExecuteRequest; iterate?: undefined } | { id: number; iterate: IterateRequest; request?: undefined };

/**
 * Encodes an `ExecuteStreamRequest`: the id, then the request (or the IterateRequest, by the loader's
 * encoder). The request is written in place, not encoded apart and copied: a coalesced call carries
 * whole batches, and a copy of them per message showed in W4's client profile.
 */
export function encodeExecuteStreamRequest(msg: ClientExecuteStreamRequest): Buffer {
  const id = msg.id >>> 0;
  const head = id ? 1 + varintSize(id) : 0;
  if (msg.request) {
    const sized = sizeExecuteRequest(msg.request);
    const w = new Writer(Buffer.allocUnsafe(head + fieldSize(sized.length)));
    w.enumField((1 << 3) | 0, id);
    w.tagLen((2 << 3) | 2, sized.length);
    writeExecuteRequest(w, sized);
    return w.buf;
  }
  const inner = kvtPackage().SegmentStore.service.Iterate.requestSerialize(msg.iterate) as Buffer;
  const w = new Writer(Buffer.allocUnsafe(head + fieldSize(inner.length)));
  w.enumField((1 << 3) | 0, id);
  w.tagLen((3 << 3) | 2, inner.length);
  w.buf.set(inner, w.pos);
  return w.buf;
}

/** An `ExecuteStreamResponse` as the client reads it: an Iterate page stays undecoded (decodeIteratePage). */
export type ClientStreamResponse = Omit<ExecuteStreamResponse, 'iterate'> & { iterate: Buffer | null };

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

/** The SegmentStore service definition with these codecs on the client side of `Execute`, `ExecuteStream` and `Iterate`. */
export function withClientCodecs(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return {
    ...service,
    Execute: { ...service.Execute, requestSerialize: encodeExecuteRequest, responseDeserialize: decodeExecuteResponse },
    ExecuteStream: { ...service.ExecuteStream, requestSerialize: encodeExecuteStreamRequest, responseDeserialize: decodeExecuteStreamResponse },
    // Iterate pages are decoded by the iterator, straight into table entries (decodeIteratePage).
    Iterate: { ...service.Iterate, responseDeserialize: (b: Buffer) => b },
  };
}

let storeClient: grpc.ServiceClientConstructor | undefined;

/** The SegmentStore client class using these codecs (made once per process). */
export function segmentStoreClientClass(): grpc.ServiceClientConstructor {
  storeClient ??= grpc.makeGenericClientConstructor(withClientCodecs(kvtPackage().SegmentStore.service), 'SegmentStore');
  return storeClient;
}
