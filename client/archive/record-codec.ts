/**
 * The binary form of one archived render (a record) and of many (a block's payload: records in
 * (rev, tid) order, back to back). A record is
 * `rev u64 | tid 16 bytes (time order) | flags u8 | headers length varint | headers JSON |
 * value length varint | value | parts varint | per part: flags u8 | name length varint | name |
 * length varint | body`, a flags bit 0 set when that body is bytes rather than text. Lengths are
 * checked as they are read, so a damaged payload is reported, never read past its end.
 */
import type { ArchivedBody, ArchivedRender, ArchivedRenderRead } from './archive-store';
import { keyToTid, tidToKey } from './tid';

const FLAG_BYTES = 1;
const ID_BYTES = 8 + 16;
const FIXED = ID_BYTES + 1;

/** (rev, tid) as one string: the identity of a render within a page. */
export function revisionId(rev: number, tid: string): string {
  return `${rev}/${tid.toLowerCase()}`;
}

/** A render encoded, with the sizes the stats count. */
export interface EncodedRecord {
  rev: number;
  tid: string;
  /** `revisionId(rev, tid)`. */
  id: string;
  bytes: Buffer;
  /** Value bytes + headers JSON bytes. */
  rawBytes: number;
}

function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    len++;
  }
  return len;
}

function writeVarint(buf: Buffer, offset: number, n: number): number {
  while (n >= 0x80) {
    buf[offset++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[offset++] = n;
  return offset;
}

/** The varint at `offset` and the offset after it; throws when it runs past `end` or is too long. */
function readVarint(buf: Uint8Array, offset: number, end: number): [number, number] {
  let n = 0;
  let scale = 1;
  for (let i = 0; i < 5; i++) {
    if (offset >= end) throw new Error('a length runs past the end');
    const b = buf[offset++];
    n += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) return [n, offset];
    scale *= 128;
  }
  throw new Error('a length is longer than 5 bytes');
}

function bodyBytes(body: ArchivedBody): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** Encodes a (checked) render. */
export function encodeRecord(render: ArchivedRender): EncodedRecord {
  const headers = Buffer.from(JSON.stringify(render.headers ?? {}), 'utf8');
  const value = bodyBytes(render.value);
  const parts = Object.entries(render.parts ?? {}).map(([name, body]) => ({ name: Buffer.from(name, 'utf8'), text: typeof body === 'string', body: bodyBytes(body) }));
  let size = FIXED + varintLength(headers.length) + headers.length + varintLength(value.length) + value.length + varintLength(parts.length);
  let rawBytes = headers.length + value.length;
  for (const p of parts) {
    size += 1 + varintLength(p.name.length) + p.name.length + varintLength(p.body.length) + p.body.length;
    rawBytes += p.name.length + p.body.length;
  }
  const bytes = Buffer.allocUnsafe(size);
  bytes.writeUInt32BE(Math.floor(render.rev / 2 ** 32), 0);
  bytes.writeUInt32BE(render.rev >>> 0, 4);
  tidToKey(render.tid).copy(bytes, 8);
  bytes[ID_BYTES] = typeof render.value === 'string' ? 0 : FLAG_BYTES;
  let at = writeVarint(bytes, FIXED, headers.length);
  at += headers.copy(bytes, at);
  at = writeVarint(bytes, at, value.length);
  at += value.copy(bytes, at);
  at = writeVarint(bytes, at, parts.length);
  for (const p of parts) {
    bytes[at++] = p.text ? 0 : FLAG_BYTES;
    at = writeVarint(bytes, at, p.name.length);
    at += p.name.copy(bytes, at);
    at = writeVarint(bytes, at, p.body.length);
    at += p.body.copy(bytes, at);
  }
  return { rev: render.rev, tid: render.tid.toLowerCase(), id: revisionId(render.rev, render.tid), bytes, rawBytes };
}

/** Where one record lies in a payload. */
export interface RecordSpan {
  start: number;
  end: number;
}

function readRev(buf: Uint8Array, at: number): number {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  return b.readUInt32BE(at) * 2 ** 32 + b.readUInt32BE(at + 4);
}

/** Reads a body's bytes at `at`: [start, end) of the body and the offset after it. */
function skipBody(buf: Uint8Array, at: number, end: number): [number, number, number] {
  const [len, from] = readVarint(buf, at, end);
  if (from + len > end) throw new Error(`a length at byte ${at} runs past the end`);
  return [from, from + len, from + len];
}

/** The span of the record starting at `start`; throws (a plain Error: the caller names the block) when it does not fit. */
function spanAt(buf: Uint8Array, start: number, end: number): { id: string; span: RecordSpan } {
  if (start + FIXED > end) throw new Error(`a record at byte ${start} is cut short`);
  const rev = readRev(buf, start);
  if (rev > Number.MAX_SAFE_INTEGER) throw new Error(`a record at byte ${start} has rev ${rev}`);
  const tid = keyToTid(buf, start + 8);
  if (buf[start + ID_BYTES] > FLAG_BYTES) throw new Error(`a record at byte ${start} has unknown flags ${buf[start + ID_BYTES]}`);
  const afterValue = skipBody(buf, skipBody(buf, start + FIXED, end)[2], end)[2];
  const [parts, afterCount] = readVarint(buf, afterValue, end);
  let at = afterCount;
  for (let i = 0; i < parts; i++) {
    if (at >= end || buf[at] > FLAG_BYTES) throw new Error(`part ${i} of a record at byte ${start} is damaged`);
    at = skipBody(buf, at + 1, end)[2];
    at = skipBody(buf, at, end)[2];
  }
  return { id: revisionId(rev, tid), span: { start, end: at } };
}

/** Every record of a payload by revisionId; throws when the payload does not parse exactly. */
export function indexRecords(payload: Uint8Array): Map<string, RecordSpan> {
  const spans = new Map<string, RecordSpan>();
  let at = 0;
  while (at < payload.length) {
    const { id, span } = spanAt(payload, at, payload.length);
    spans.set(id, span);
    at = span.end;
  }
  return spans;
}

/** Decodes the record at `span` of `payload` for page `title`; fresh copies, never views. Throws a plain Error when damaged. */
export function decodeRecord(title: string, payload: Uint8Array, span: RecordSpan = { start: 0, end: payload.length }): ArchivedRenderRead {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const { start, end } = span;
  const body = (isBytes: boolean, from: number, to: number): ArchivedBody => (isBytes ? new Uint8Array(buf.subarray(from, to)) : buf.toString('utf8', from, to));
  const rev = readRev(buf, start);
  const tid = keyToTid(buf, start + 8);
  let [from, to, at] = skipBody(buf, start + FIXED, end);
  const headers = JSON.parse(buf.toString('utf8', from, to)) as Record<string, string>;
  [from, to, at] = skipBody(buf, at, end);
  const value = body((buf[start + ID_BYTES] & FLAG_BYTES) !== 0, from, to);
  const [count, afterCount] = readVarint(buf, at, end);
  at = afterCount;
  const parts: Record<string, ArchivedBody> = {};
  for (let i = 0; i < count; i++) {
    const isBytes = (buf[at] & FLAG_BYTES) !== 0;
    [from, to, at] = skipBody(buf, at + 1, end);
    const name = buf.toString('utf8', from, to);
    [from, to, at] = skipBody(buf, at, end);
    parts[name] = body(isBytes, from, to);
  }
  if (at !== end) throw new Error(`a record at byte ${start} has a wrong length`);
  return { title, rev, tid, value, headers, parts };
}

/** The payload of a block: the records in (rev, tid) order, so the same renders always give the same bytes. */
export function joinRecords(records: Iterable<{ bytes: Uint8Array }>): Buffer {
  const idOf = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, ID_BYTES);
  const sorted = [...records].sort((a, b) => Buffer.compare(idOf(a.bytes), idOf(b.bytes)));
  return Buffer.concat(sorted.map((r) => r.bytes));
}

/** The (rev, tid) of an encoded record. */
export function recordId(bytes: Uint8Array): string {
  return spanAt(bytes, 0, bytes.length).id;
}
