/**
 * Hand-written protobuf codecs for the segment store's hottest messages: decoding `ExecuteRequest`
 * (alone or in an `ExecuteStreamRequest`; the request itself is read by execute-request-decoder.ts),
 * encoding `ExecuteResponse` (alone or in an `ExecuteStreamResponse`) and `IterateResponse`.
 *
 * Why: profiles of W1/W4 showed the generic loader (protobufjs `toObject` with defaults) spending most
 * of its time allocating a fresh empty Buffer for every unset bytes field of every Modification, and
 * `fromObject` + `encode` copying every Entry of a page. These codecs produce exactly the shapes
 * `proto/load.ts` produces (camelCase, enums as names, uint64 as strings, bytes as Buffer, defaults
 * filled in, the oneof's virtual field), so handlers cannot tell the difference; the equivalence is
 * tested against the loader in test/unit/segmentstore/wire-codec.test.ts. Everything else keeps the
 * loader's codecs.
 */
import type * as grpc from '@grpc/grpc-js';
import type { ExecuteResponse, ExecuteStreamResponse, IterateResponse } from '../../proto/messages';
import { segmentStoreService } from '../../proto/load';
import { errorMessage } from '../../server-kit/fault';
import { fieldSize, Reader, varintSize, writeUtf8, writeVarint } from '../../proto/wire';
import { decodeExecuteRequest } from './execute-request-decoder';

// ---- encoding: sizes first, then one allocation ----

class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  /** A varint (int32 negatives as protobuf writes them: 10 bytes). */
  varint(n: number): void {
    this.pos = writeVarint(this.buf, this.pos, n);
  }

  bytes(tag: number, b: Uint8Array): void {
    this.buf[this.pos++] = tag;
    this.varint(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A string field; `len` is its UTF-8 length (short ASCII ones, like sequences, are copied in JS: writeUtf8). */
  string(tag: number, s: string, len: number): void {
    this.buf[this.pos++] = tag;
    this.varint(len);
    this.pos = writeUtf8(this.buf, this.pos, s, len);
  }

  /**
   * A string field whose UTF-8 length is found while copying it: a short ASCII string (a sequence) is
   * copied by a JS loop and its one-byte length set, with no native call at all; anything else goes
   * through {@link Writer.string}. Only for a buffer sized with the string's UTF-8 length (the ASCII
   * prefix copied before a non-ASCII character never reaches past it, and is then overwritten).
   */
  shortString(tag: number, s: string): void {
    const n = s.length;
    // Up to 32 UTF-16 units are at most 96 UTF-8 bytes: a one-byte length either way.
    if (n <= 32) {
      const buf = this.buf;
      const at = this.pos + 2;
      let i = 0;
      while (i < n) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at + i++] = c;
      }
      if (i === n) {
        buf[this.pos] = tag;
        buf[this.pos + 1] = n;
        this.pos = at + n;
        return;
      }
    }
    this.string(tag, s, Buffer.byteLength(s));
  }
}

interface EntryLike {
  found?: boolean;
  key?: Uint8Array;
  value?: Uint8Array;
  sequence?: string;
}

/** Payload size of an Entry; `seqLen` is the UTF-8 length of its sequence. Default values are omitted. */
function entrySize(e: EntryLike, seqLen: number): number {
  return (e.found ? 2 : 0) + (e.key?.length ? fieldSize(e.key.length) : 0) + (e.value?.length ? fieldSize(e.value.length) : 0) + (seqLen ? fieldSize(seqLen) : 0);
}

function writeEntry(w: Writer, tag: number, e: EntryLike, seqLen: number): void {
  w.buf[w.pos++] = tag;
  w.varint(entrySize(e, seqLen));
  if (e.found) {
    w.buf[w.pos++] = (1 << 3) | 0;
    w.buf[w.pos++] = 1;
  }
  if (e.key?.length) w.bytes((2 << 3) | 2, e.key);
  if (e.value?.length) w.bytes((3 << 3) | 2, e.value);
  if (seqLen) w.string((4 << 3) | 2, e.sequence!, seqLen);
}

/** Encodes an `IterateResponse` (items: repeated Entry = 1, done = 2). */
export function encodeIterateResponse(res: IterateResponse): Buffer {
  const items = res.items ?? [];
  const seqLens = new Array<number>(items.length);
  let size = res.done ? 2 : 0;
  for (let i = 0; i < items.length; i++) {
    seqLens[i] = items[i].sequence ? Buffer.byteLength(items[i].sequence) : 0;
    size += fieldSize(entrySize(items[i], seqLens[i]));
  }
  const w = new Writer(Buffer.allocUnsafe(size));
  for (let i = 0; i < items.length; i++) writeEntry(w, (1 << 3) | 2, items[i], seqLens[i]);
  if (res.done) {
    w.buf[w.pos++] = (2 << 3) | 0;
    w.buf[w.pos++] = 1;
  }
  return w.buf;
}

/** A SubResponse as the store writes it: an iterator page may come already encoded (wire-page-sink.ts). */
export type SubResponseLike = Omit<ExecuteResponse['responses'][number], 'iterate'> & { iterate?: IterateResponse | Buffer | null };
/** An `ExecuteResponse` as the store writes it. */
export interface WireExecuteResponse {
  responses: SubResponseLike[];
}

/** The iterator page of a SubResponse, encoded. */
function pageOf(s: SubResponseLike): Buffer | undefined {
  return s.iterate ? (Buffer.isBuffer(s.iterate) ? s.iterate : encodeIterateResponse(s.iterate)) : undefined;
}

/** Payload size of the set member of one SubResponse's oneof (update = 1, get = 2, error = 3, iterate = 4). */
function memberSize(s: SubResponseLike): number {
  if (s.error) {
    const e = s.error;
    return (
      (e.code ? fieldSize(Buffer.byteLength(e.code)) : 0) +
      (e.message ? fieldSize(Buffer.byteLength(e.message)) : 0) +
      (e.index ? 1 + varintSize(e.index) : 0) +
      (e.segmentId ? fieldSize(Buffer.byteLength(e.segmentId)) : 0)
    );
  }
  if (s.iterate) return pageOf(s)!.length;
  let n = 0;
  if (s.get) for (const e of s.get.entries ?? []) n += fieldSize(entrySize(e, e.sequence ? Buffer.byteLength(e.sequence) : 0));
  else if (s.update) {
    for (const seq of s.update.sequences ?? []) n += fieldSize(Buffer.byteLength(seq));
    if (s.update.firstSequence) n += fieldSize(Buffer.byteLength(s.update.firstSequence));
  }
  return n;
}

function writeError(w: Writer, e: NonNullable<SubResponseLike['error']>): void {
  if (e.code) w.string((1 << 3) | 2, e.code, Buffer.byteLength(e.code));
  if (e.message) w.string((2 << 3) | 2, e.message, Buffer.byteLength(e.message));
  if (e.index) {
    w.buf[w.pos++] = (3 << 3) | 0;
    w.varint(e.index);
  }
  if (e.segmentId) w.string((4 << 3) | 2, e.segmentId, Buffer.byteLength(e.segmentId));
}

function writeSubResponse(w: Writer, s: SubResponseLike, member: number, page: Buffer | undefined): void {
  const present = Boolean(s.error || s.get || s.update || page);
  w.buf[w.pos++] = (1 << 3) | 2;
  w.varint(present ? fieldSize(member) : 0);
  if (!present) return;
  w.buf[w.pos++] = s.error ? (3 << 3) | 2 : s.get ? (2 << 3) | 2 : page ? (4 << 3) | 2 : (1 << 3) | 2;
  w.varint(member);
  if (s.error) writeError(w, s.error);
  else if (page) {
    w.buf.set(page, w.pos);
    w.pos += page.length;
  } else if (s.get) for (const e of s.get.entries ?? []) writeEntry(w, (1 << 3) | 2, e, e.sequence ? Buffer.byteLength(e.sequence) : 0);
  else {
    for (const seq of s.update!.sequences ?? []) w.shortString((1 << 3) | 2, seq);
    if (s.update!.firstSequence) w.shortString((2 << 3) | 2, s.update!.firstSequence);
  }
}

/** Encodes an `ExecuteResponse` (responses: repeated SubResponse = 1). */
export function encodeExecuteResponse(res: WireExecuteResponse | ExecuteResponse): Buffer {
  const responses: SubResponseLike[] = res.responses ?? [];
  // An object page is encoded once, for its size and its bytes.
  const pages = responses.map(pageOf);
  const members = responses.map((s, i) => (s.error ? memberSize(s) : pages[i] ? pages[i]!.length : memberSize(s)));
  let total = 0;
  for (let i = 0; i < responses.length; i++) {
    const s = responses[i];
    total += fieldSize(s.error || s.get || s.update || pages[i] ? fieldSize(members[i]) : 0);
  }
  const w = new Writer(Buffer.allocUnsafe(total));
  for (let i = 0; i < responses.length; i++) writeSubResponse(w, responses[i], members[i], responses[i].error ? undefined : pages[i]);
  return w.buf;
}

/** An `ExecuteStreamRequest` as the store reads it. */
export interface StreamRequestMessage {
  id: number;
  request: { requests: Record<string, unknown>[] } | null;
  iterate: Record<string, unknown> | null;
  /** Its size on the wire (what the stream's read budget counts). */
  bytes: number;
}

/**
 * An `ExecuteStreamRequest` whose framing and id decode but whose request or iterate does not: it is
 * answered under its id with INVALID_ARGUMENT, and the stream goes on.
 */
export class MalformedStreamMessage {
  constructor(
    readonly id: number,
    /** The field and why it does not decode. */
    readonly reason: string,
  ) {}
}

const REQUEST_TAG = (2 << 3) | 2;
const ITERATE_TAG = (3 << 3) | 2;

/**
 * Decodes an `ExecuteStreamRequest` exactly as the loader would (`request`, `iterate` null when
 * absent; the small IterateRequest by the loader's own decoder), adding its size. A request or
 * iterate that does not decode inside an intact message gives a {@link MalformedStreamMessage};
 * a message whose own fields do not decode (its id cannot be trusted) throws.
 */
export function decodeExecuteStreamRequest(buf: Buffer): StreamRequestMessage | MalformedStreamMessage {
  const r = new Reader(buf, 0, buf.length);
  const out: StreamRequestMessage = { id: 0, request: null, iterate: null, bytes: buf.length };
  let invalid: string | undefined;
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 0)) out.id = r.varint() >>> 0;
    else if (tag === REQUEST_TAG || tag === ITERATE_TAG) {
      const sub = r.sub();
      const member = buf.subarray(sub.pos, sub.end);
      try {
        if (tag === REQUEST_TAG) out.request = decodeExecuteRequest(member);
        else out.iterate = segmentStoreService().Iterate.requestDeserialize(member) as Record<string, unknown>;
      } catch (err) {
        invalid ??= `${tag === REQUEST_TAG ? 'request is not a valid kvt.v1.ExecuteRequest' : 'iterate is not a valid kvt.v1.IterateRequest'}: ${errorMessage(err)}`;
      }
    } else r.skip(tag & 7);
  }
  return invalid === undefined ? out : new MalformedStreamMessage(out.id, invalid);
}

/** An `ExecuteStreamResponse` as the store writes it: an Iterate page may come already encoded. */
export type StreamResponseMessage = Omit<ExecuteStreamResponse, 'iterate' | 'response'> & { response: WireExecuteResponse | ExecuteResponse | null; iterate: IterateResponse | Buffer | null };

/** Encodes an `ExecuteStreamResponse`: the id, then the error, or the response and the page. */
export function encodeExecuteStreamResponse(msg: StreamResponseMessage): Buffer {
  const id = msg.id >>> 0;
  const head = id ? 1 + varintSize(id) : 0;
  if (msg.error) {
    const size = memberSize({ error: msg.error });
    const w = new Writer(Buffer.allocUnsafe(head + fieldSize(size)));
    if (id) {
      w.buf[w.pos++] = (1 << 3) | 0;
      w.varint(id);
    }
    w.buf[w.pos++] = (3 << 3) | 2;
    w.varint(size);
    writeError(w, msg.error);
    return w.buf;
  }
  const inner = msg.response ? encodeExecuteResponse(msg.response) : undefined;
  const page = msg.iterate ? (Buffer.isBuffer(msg.iterate) ? msg.iterate : encodeIterateResponse(msg.iterate)) : undefined;
  const w = new Writer(Buffer.allocUnsafe(head + (inner ? fieldSize(inner.length) : 0) + (page ? fieldSize(page.length) : 0)));
  if (id) {
    w.buf[w.pos++] = (1 << 3) | 0;
    w.varint(id);
  }
  if (inner) w.bytes((2 << 3) | 2, inner);
  if (page) w.bytes((4 << 3) | 2, page);
  return w.buf;
}

/**
 * The SegmentStore service definition with these codecs on the server side of `Execute`,
 * `ExecuteStream` and `Iterate` (what a client sends and receives is unchanged).
 */
export function withFastCodecs(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return {
    ...service,
    Execute: { ...service.Execute, requestDeserialize: decodeExecuteRequest, responseSerialize: encodeExecuteResponse },
    // Answers arrive already encoded (ExecuteStreams counts their size), refusals as objects.
    ExecuteStream: {
      ...service.ExecuteStream,
      requestDeserialize: decodeExecuteStreamRequest,
      responseSerialize: (msg: StreamResponseMessage | Buffer) => (Buffer.isBuffer(msg) ? msg : encodeExecuteStreamResponse(msg)),
    },
    // A keyed family's page arrives already encoded (wire-page-sink.ts).
    Iterate: { ...service.Iterate, responseSerialize: (res: IterateResponse | Buffer) => (Buffer.isBuffer(res) ? res : encodeIterateResponse(res)) },
  };
}
