/**
 * Hand-written protobuf codecs for the client's hottest calls: encoding `ExecuteRequest`, decoding
 * `ExecuteResponse` and `IterateResponse`.
 *
 * Why: in the benchmark's client process the generic loader (protobufjs `fromObject` + `encode`, and
 * `decode` + `toObject` with defaults) was the largest cost per operation and per scanned entry. These
 * produce exactly what `proto/load.ts` produces (camelCase, enums as names, uint64 as strings, bytes as
 * Buffer, defaults filled in, the oneof's virtual field); the equivalence is tested against the loader
 * in test/unit/client/wire-codec.test.ts. The wire primitives (reader, sizes) live in proto/wire.ts,
 * shared with the segment store's codecs.
 */
import * as grpc from '@grpc/grpc-js';
import { kvtPackage } from '../../proto/load';
import type { Entry, ExecuteRequest, ExecuteResponse, IterateResponse, Modification, SubRequest, SubResponse } from '../../proto/messages';
import { fieldSize, Reader, varintSize } from '../../proto/wire';

const EMPTY: Buffer = Buffer.alloc(0);
const MODIFICATION_TYPES: Record<string, number> = { PUT: 0, INSERT: 1, REMOVE: 2, REMOVE_RANGE: 3 };
const CONDITION_KINDS: Record<string, number> = { NONE: 0, NOT_EXISTS: 1, VERSION: 2 };

// ---- decoding ----


function decodeEntry(r: Reader): Entry {
  const e: Entry = { found: false, key: EMPTY, value: EMPTY, sequence: '' };
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 0)) e.found = r.varint() !== 0;
    else if (tag === ((2 << 3) | 2)) e.key = r.bytes();
    else if (tag === ((3 << 3) | 2)) e.value = r.bytes();
    else if (tag === ((4 << 3) | 2)) e.sequence = r.string();
    else r.skip(tag & 7);
  }
  return e;
}

/** Decodes an `IterateResponse` exactly as the loader would. */
export function decodeIterateResponse(buf: Buffer): IterateResponse {
  const r = new Reader(buf, 0, buf.length);
  const res: IterateResponse = { items: [], done: false };
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) res.items.push(decodeEntry(r.sub()));
    else if (tag === ((2 << 3) | 0)) res.done = r.varint() !== 0;
    else r.skip(tag & 7);
  }
  return res;
}

/** A message whose only field (1) is repeated: UpdateResponse (strings) or GetResponse (Entries). */
function decodeRepeated<T>(r: Reader, item: (r: Reader) => T): T[] {
  const out: T[] = [];
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) out.push(item(r));
    else r.skip(tag & 7);
  }
  return out;
}

function decodeError(r: Reader): NonNullable<SubResponse['error']> {
  const e = { code: '', message: '', index: 0, segmentId: '' };
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) e.code = r.string();
    else if (tag === ((2 << 3) | 2)) e.message = r.string();
    else if (tag === ((3 << 3) | 0)) e.index = r.varint();
    else if (tag === ((4 << 3) | 2)) e.segmentId = r.string();
    else r.skip(tag & 7);
  }
  return e;
}

function decodeSubResponse(r: Reader): SubResponse {
  const s: SubResponse = {};
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) s.update = { sequences: decodeRepeated(r.sub(), (x) => x.string()) };
    else if (tag === ((2 << 3) | 2)) s.get = { entries: decodeRepeated(r.sub(), (x) => decodeEntry(x.sub())) };
    else if (tag === ((3 << 3) | 2)) s.error = decodeError(r.sub());
    else r.skip(tag & 7);
  }
  // The loader names the set member of the oneof; with several on the wire, the last field number wins.
  if (s.error) s.response = 'error';
  else if (s.get) s.response = 'get';
  else if (s.update) s.response = 'update';
  return s;
}

/** Decodes an `ExecuteResponse` exactly as the loader would. */
export function decodeExecuteResponse(buf: Buffer): ExecuteResponse {
  return { responses: decodeRepeated(new Reader(buf, 0, buf.length), (r) => decodeSubResponse(r.sub())) };
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
    this.pos += this.buf.write(s!, this.pos, len, 'utf8');
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

/** Sizes of one SubRequest: its member's payload, and the payload of each of the member's items. */
interface SubSizes {
  member: number;
  items: number[];
}

function subRequestSizes(s: SubRequest): SubSizes {
  const body = s.update ?? s.get;
  if (!body) return { member: 0, items: [] };
  const list: Partial<Modification & { family: string; key: Uint8Array }>[] = (s.update ? s.update.modifications : s.get!.keys) ?? [];
  const items = new Array<number>(list.length);
  let member = body.segmentId ? fieldSize(strLen(body.segmentId)) : 0;
  for (let i = 0; i < list.length; i++) {
    items[i] = s.update ? modificationSize(list[i]) : (list[i].family ? fieldSize(strLen(list[i].family)) : 0) + blen(list[i].key);
    member += fieldSize(items[i]);
  }
  return { member, items };
}

function writeSubRequest(w: Writer, s: SubRequest, sizes: SubSizes): void {
  const body = s.update ?? s.get;
  w.tagLen((1 << 3) | 2, body ? fieldSize(sizes.member) : 0);
  if (!body) return;
  w.tagLen(s.update ? (1 << 3) | 2 : (2 << 3) | 2, sizes.member);
  w.string((1 << 3) | 2, body.segmentId, strLen(body.segmentId));
  if (s.update) {
    const mods = s.update.modifications ?? [];
    for (let i = 0; i < mods.length; i++) writeModification(w, mods[i], sizes.items[i]);
    return;
  }
  const keys = s.get!.keys ?? [];
  for (let i = 0; i < keys.length; i++) {
    w.tagLen((2 << 3) | 2, sizes.items[i]);
    w.string((1 << 3) | 2, keys[i].family, strLen(keys[i].family));
    w.bytes((2 << 3) | 2, keys[i].key);
  }
}

/** Encodes an `ExecuteRequest` (sub-requests hold an update or a get; default values are left out). */
export function encodeExecuteRequest(req: ExecuteRequest): Buffer {
  const subs = req.requests ?? [];
  const sizes = subs.map(subRequestSizes);
  let total = 0;
  for (let i = 0; i < subs.length; i++) total += fieldSize(subs[i].update ?? subs[i].get ? fieldSize(sizes[i].member) : 0);
  const w = new Writer(Buffer.allocUnsafe(total));
  for (let i = 0; i < subs.length; i++) writeSubRequest(w, subs[i], sizes[i]);
  return w.buf;
}

/** The SegmentStore service definition with these codecs on the client side of `Execute` and `Iterate`. */
export function withClientCodecs(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return {
    ...service,
    Execute: { ...service.Execute, requestSerialize: encodeExecuteRequest, responseDeserialize: decodeExecuteResponse },
    Iterate: { ...service.Iterate, responseDeserialize: decodeIterateResponse },
  };
}

let storeClient: grpc.ServiceClientConstructor | undefined;

/** The SegmentStore client class using these codecs (made once per process). */
export function segmentStoreClientClass(): grpc.ServiceClientConstructor {
  storeClient ??= grpc.makeGenericClientConstructor(withClientCodecs(kvtPackage().SegmentStore.service), 'SegmentStore');
  return storeClient;
}
