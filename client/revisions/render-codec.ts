/**
 * The value of a render record, and the chunks of a large render. A record holds the headers and a
 * directory of the bodies (the value, then each part: name, text or bytes, length). When the whole
 * fits in one value (MAX_VALUE_LENGTH) the bodies follow inline, so a render is one key; otherwise
 * the bodies, concatenated, are cut into chunks of MAX_VALUE_LENGTH bytes stored under keys of their
 * own (key-layout.ts, kind 0x20), and the record names the upload (8 random bytes in the chunk keys)
 * and the chunk count. The record is written in the same atomic update as its last chunks, so a
 * reader that finds a record finds every chunk it names.
 *
 * ```
 * u8 format (1) · u8 flags (1 = chunked) · u64 expiresAt (0 = never) · u32 headers length · headers JSON
 * · u16 bodies · per body: u8 (0 text, 1 bytes) · u16 name length · name · u32 length
 * · inline: the bodies · chunked: upload (8) · u32 chunk count
 * ```
 */
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors';
import { MAX_VALUE_LENGTH } from '../limits';
import { readUint64, writeUint64 } from './key-layout';
import { bodyOf, CheckedContent } from './render-input';
import type { RenderBody } from './types';

/** Bytes of one chunk of a large render (all but the last are full). */
export const CHUNK_BYTES = MAX_VALUE_LENGTH;

const FORMAT = 1;
const FLAG_CHUNKED = 1;

/** A render as the values to store. */
export interface EncodedRender {
  /** The record's value. */
  record: Buffer;
  /** The upload id of the chunks (null when the bodies are inline). */
  upload: Buffer | null;
  /** The chunks' values, in order (empty when inline). */
  chunks: Buffer[];
}

/** One body in a record's directory. */
export interface DirectoryEntry {
  name: string;
  text: boolean;
  length: number;
}

/** A decoded record, without its bodies. */
export interface RecordHeader {
  /** Milliseconds since the epoch after which the record no longer counts (0 = never). */
  expiresAt: number;
  headers: Record<string, string>;
  directory: DirectoryEntry[];
  /** Null when the bodies are inline. */
  upload: Buffer | null;
  chunkCount: number;
  /** Where the inline bodies start in the record. */
  bodyOffset: number;
  /** Sum of the bodies' lengths. */
  bodyBytes: number;
}

/** Encodes a checked render: inline when it fits one value, else in chunks with a fresh upload id. */
export function encodeRender(content: CheckedContent, expiresAt: number): EncodedRender {
  const names = content.bodies.map((b) => Buffer.from(b.name, 'utf8'));
  let bodyBytes = 0;
  for (const b of content.bodies) bodyBytes += b.bytes.length;
  const directoryBytes = names.reduce((n, name) => n + 7 + name.length, 2);
  const head = 14 + content.headersJson.length + directoryBytes;
  const inline = head + bodyBytes <= MAX_VALUE_LENGTH;
  const record = Buffer.allocUnsafe(head + (inline ? bodyBytes : 12));
  record[0] = FORMAT;
  record[1] = inline ? 0 : FLAG_CHUNKED;
  writeUint64(record, 2, expiresAt);
  record.writeUInt32BE(content.headersJson.length, 10);
  content.headersJson.copy(record, 14);
  let at = record.writeUInt16BE(content.bodies.length, 14 + content.headersJson.length);
  content.bodies.forEach((b, i) => {
    record[at] = b.text ? 0 : 1;
    at = record.writeUInt16BE(names[i].length, at + 1);
    at += names[i].copy(record, at);
    at = record.writeUInt32BE(b.bytes.length, at);
  });
  if (inline) {
    for (const b of content.bodies) at += b.bytes.copy(record, at);
    return { record, upload: null, chunks: [] };
  }
  const upload = randomBytes(8);
  upload.copy(record, at);
  const all = Buffer.concat(content.bodies.map((b) => b.bytes));
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < all.length; offset += CHUNK_BYTES) chunks.push(all.subarray(offset, offset + CHUNK_BYTES));
  record.writeUInt32BE(chunks.length, at + 8);
  return { record, upload, chunks };
}

function malformed(what: string): ServiceError {
  return new ServiceError(`a render record of this page is malformed (${what}): the family holds data the revision layer did not write`, { code: 'SERVICE_ERROR' });
}

/**
 * Decodes a record's header and directory.
 * @throws ServiceError (SERVICE_ERROR) when the value is not a render record.
 */
export function decodeRecord(value: Uint8Array): RecordHeader {
  const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (b.length < 16 || b[0] !== FORMAT) throw malformed(`format ${b[0]}, ${b.length} bytes`);
  const chunked = (b[1] & FLAG_CHUNKED) !== 0;
  const expiresAt = readUint64(b, 2);
  const headersEnd = 14 + b.readUInt32BE(10);
  if (headersEnd + 2 > b.length) throw malformed('headers past the end');
  let headers: Record<string, string>;
  try {
    headers = JSON.parse(b.toString('utf8', 14, headersEnd)) as Record<string, string>;
  } catch {
    throw malformed('headers are not JSON');
  }
  const count = b.readUInt16BE(headersEnd);
  let at = headersEnd + 2;
  const directory: DirectoryEntry[] = [];
  let bodyBytes = 0;
  for (let i = 0; i < count; i++) {
    if (at + 7 > b.length) throw malformed('directory past the end');
    const text = b[at] === 0;
    const nameEnd = at + 3 + b.readUInt16BE(at + 1);
    const length = b.readUInt32BE(nameEnd);
    directory.push({ name: b.toString('utf8', at + 3, nameEnd), text, length });
    bodyBytes += length;
    at = nameEnd + 4;
  }
  if (!chunked) {
    if (at + bodyBytes !== b.length) throw malformed('inline bodies of the wrong length');
    return { expiresAt, headers, directory, upload: null, chunkCount: 0, bodyOffset: at, bodyBytes };
  }
  if (at + 12 !== b.length) throw malformed('chunk reference of the wrong length');
  const chunkCount = b.readUInt32BE(at + 8);
  if (chunkCount !== Math.ceil(bodyBytes / CHUNK_BYTES)) throw malformed(`${chunkCount} chunks for ${bodyBytes} bytes`);
  return { expiresAt, headers, directory, upload: Buffer.from(b.subarray(at, at + 8)), chunkCount, bodyOffset: at, bodyBytes };
}

/**
 * The value and parts of a record from its bodies' bytes (inline: the record itself from bodyOffset);
 * with `asBytes`, every body as a view of `bytes` (see ReadRenderOptions.bytes).
 */
export function bodiesOf(header: RecordHeader, bytes: Buffer, offset: number, asBytes = false): { value: RenderBody; parts: Record<string, RenderBody> } {
  const parts: Record<string, RenderBody> = {};
  let value: RenderBody = '';
  let at = offset;
  header.directory.forEach((d, i) => {
    // A copy for bytes bodies read as written: the caller may keep one part without keeping the whole
    // record alive. Read as bytes (ReadRenderOptions.bytes), every body is a view, as documented.
    const slice = d.text || asBytes ? bytes.subarray(at, at + d.length) : Buffer.from(bytes.subarray(at, at + d.length));
    const body = bodyOf(slice, d.text, asBytes);
    if (i === 0) value = body;
    else parts[d.name] = body;
    at += d.length;
  });
  return { value, parts };
}

/** Expected length of chunk `index` of a record. */
export function chunkLength(header: RecordHeader, index: number): number {
  return index < header.chunkCount - 1 ? CHUNK_BYTES : header.bodyBytes - CHUNK_BYTES * (header.chunkCount - 1);
}
