/**
 * Hand-written protobuf codecs for the client's hottest calls: encoding `ExecuteRequest` (alone or in
 * an `ExecuteStreamRequest`) here, decoding `ExecuteResponse` (alone or in an `ExecuteStreamResponse`)
 * and `IterateResponse` (straight into the iterator's items) in wire-decoder.ts; `withClientCodecs`
 * puts both on the SegmentStore service definition.
 *
 * Why: in the benchmark's client process the generic loader (protobufjs `fromObject` + `encode`, and
 * `decode` + `toObject` with defaults) was the largest cost per operation and per scanned entry. These
 * produce exactly what `proto/load.ts` produces (camelCase, enums as names, uint64 as strings, bytes as
 * Buffer, defaults filled in, the oneof's virtual field); the equivalence is tested against the loader
 * in test/unit/client/wire-codec.test.ts. The size arithmetic and the varint writer live in
 * proto/wire.ts and the enum numbers in proto/enums.ts, shared with the segment store's codecs;
 * decoding uses one cursor per message (no reader object per field or entry).
 * The table's own updates arrive with their modifications already encoded (update-encoder.ts) and are
 * copied as they are.
 */
import * as grpc from '@grpc/grpc-js';
import { kvtPackage } from '../../proto/load';
import { CONDITION_KINDS, enumNumber, MODIFICATION_TYPES } from '../../proto/enums';
import type { ExecuteRequest, IterateRequestInput, Modification, SubRequest, UpdateRequest } from '../../proto/messages';
import { fieldSize, varintSize, writeUtf8, writeVarint } from '../../proto/wire';
import { EncodedModifications } from './update-encoder';
import { decodeExecuteResponse, decodeExecuteStreamResponse } from './wire-decoder';

// ---- encoding: sizes first, then one allocation ----

function strLen(s: string | undefined): number {
  return s ? Buffer.byteLength(s) : 0;
}

class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(n: number): void {
    this.pos = writeVarint(this.buf, this.pos, n);
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

type Cond = NonNullable<Modification['condition']>;

/**
 * A modification as this encoder takes it: the decoded shape with any field omitted and bytes any
 * Uint8Array. (Not the generated `ModificationInput`: that lets bytes be strings, read as base64 by
 * the loader, and this encoder copies bytes as they are.)
 */
type ModificationLike = { [F in keyof Modification]?: Modification[F] extends Buffer ? Uint8Array : Modification[F] };

function conditionSize(c: Cond): number {
  const kind = enumNumber(CONDITION_KINDS, c.kind);
  return (kind ? 1 + varintSize(kind) : 0) + (c.segmentId ? fieldSize(strLen(c.segmentId)) : 0) + (c.sequence ? fieldSize(strLen(c.sequence)) : 0);
}

const blen = (b: Uint8Array | undefined): number => (b && b.length ? fieldSize(b.length) : 0);

function modificationSize(m: ModificationLike): number {
  const type = enumNumber(MODIFICATION_TYPES, m.type);
  return (
    (type ? 1 + varintSize(type) : 0) +
    (m.family ? fieldSize(strLen(m.family)) : 0) +
    blen(m.key) +
    blen(m.value) +
    (m.condition ? fieldSize(conditionSize(m.condition)) : 0) +
    (m.ttlMs ? fieldSize(strLen(m.ttlMs)) : 0) +
    blen(m.rangeFrom) +
    blen(m.rangeTo) +
    blen(m.rangePrefix)
  );
}

function writeModification(w: Writer, m: ModificationLike, size: number): void {
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

/**
 * A Get as this encoder takes it. Narrower than the generated `GetRequestInput`, which lets bytes be
 * a string too (the loader reads one as base64): this encoder copies a key's bytes as they are.
 */
export interface ClientGetRequest {
  segmentId: string;
  keys: { family: string; key: Uint8Array }[];
}

/** A sub-request as the client sends it: a get, or an update with encoded modifications. */
export type ClientSubRequest =
  | { update: EncodedUpdateRequest; get?: undefined; iterate?: undefined }
  | { get: ClientGetRequest; update?: undefined; iterate?: undefined }
  | { iterate: EncodedIterateRequest; update?: undefined; get?: undefined };

/** An IterateRequest encoded once, when its page is asked for (see {@link encodeIterateRequest}). */
export class EncodedIterateRequest {
  constructor(readonly bytes: Buffer) {}
}

/** Encodes an IterateRequest (by the loader's encoder: a small message, one per page). */
export function encodeIterateRequest(req: IterateRequestInput): EncodedIterateRequest {
  return new EncodedIterateRequest(kvtPackage().SegmentStore.service.Iterate.requestSerialize(req) as Buffer);
}

/** The encoded IterateRequest of a sub-request that asks for a page, if it does. */
function iterateOf(s: SubRequest | ClientSubRequest): Buffer | undefined {
  const it = s.iterate;
  if (!it) return undefined;
  return it instanceof EncodedIterateRequest ? it.bytes : encodeIterateRequest(it as IterateRequestInput).bytes;
}

/** An `ExecuteRequest` as the client sends it. */
export interface ClientExecuteRequest {
  requests: ClientSubRequest[];
}

type AnyUpdate = UpdateRequest | EncodedUpdateRequest;

/** Sizes of one SubRequest: its member's payload, and the payload of each of the member's items. */
interface SubSizes {
  member: number;
  items: number[];
  /** The encoded IterateRequest of a page's sub-request. */
  page?: Buffer;
}

const NO_ITEMS: number[] = [];

function subRequestSizes(s: SubRequest | ClientSubRequest): SubSizes {
  const page = iterateOf(s);
  if (page) return { member: page.length, items: NO_ITEMS, page };
  const body: AnyUpdate | ClientGetRequest | null | undefined = s.update ?? s.get;
  if (!body) return { member: 0, items: NO_ITEMS };
  let member = body.segmentId ? fieldSize(strLen(body.segmentId)) : 0;
  const encoded = s.update?.modifications;
  if (encoded instanceof EncodedModifications) return { member: member + encoded.bytes.length, items: NO_ITEMS };
  const list: ModificationLike[] = (s.update ? (s.update as UpdateRequest).modifications : s.get!.keys) ?? [];
  const items = new Array<number>(list.length);
  for (let i = 0; i < list.length; i++) {
    items[i] = s.update ? modificationSize(list[i]) : (list[i].family ? fieldSize(strLen(list[i].family)) : 0) + blen(list[i].key);
    member += fieldSize(items[i]);
  }
  return { member, items };
}

/**
 * Bytes `sub` takes in an encoded `ExecuteRequest` (what the coalescer counts against a message's
 * size: keys, values, the key family repeated with every modification and get key, and the framing).
 * Gets merged into one sub-request take a little less than the sum of theirs.
 */
export function subRequestBytes(sub: ClientSubRequest): number {
  return fieldSize((sub.update ?? sub.get ?? sub.iterate) ? fieldSize(subRequestSizes(sub).member) : 0);
}

/** Bytes one key of a Get takes in an encoded `ExecuteRequest` (family and key with their framing). */
export function getKeyBytes(familyBytes: number, keyBytes: number): number {
  return fieldSize((familyBytes ? fieldSize(familyBytes) : 0) + (keyBytes ? fieldSize(keyBytes) : 0));
}

function writeSubRequest(w: Writer, s: SubRequest | ClientSubRequest, sizes: SubSizes): void {
  if (sizes.page) {
    w.tagLen((1 << 3) | 2, fieldSize(sizes.member));
    w.tagLen((3 << 3) | 2, sizes.member);
    w.buf.set(sizes.page, w.pos);
    w.pos += sizes.page.length;
    return;
  }
  const body: AnyUpdate | ClientGetRequest | null | undefined = s.update ?? s.get;
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
  for (let i = 0; i < subs.length; i++) length += fieldSize((subs[i].update ?? subs[i].get ?? sizes[i].page) ? fieldSize(sizes[i].member) : 0);
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
export type ClientExecuteStreamRequest = { id: number; request: ExecuteRequest | ClientExecuteRequest; iterate?: undefined } | { id: number; iterate: IterateRequestInput; request?: undefined };

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
