/**
 * Checks what callers give the page revision layer — titles, revisions, tids, bodies, headers, parts,
 * options — before anything is read or written, and turns a render into bytes. Every refusal is an
 * {@link InvalidArgumentError} naming the field and the limit.
 */
import { InvalidArgumentError } from '../errors';
import { MAX_KEY_FAMILY_LENGTH } from '../limits';
import { MAX_REV } from './key-layout';
import { SlabTextEncoder } from './text-encoder';
import { checkTimeUuid } from './time-uuid';
import type { ReadRenderOptions, Render, RenderBody } from './types';

/** The most bytes one render may hold: its value, parts, part names and headers together (32 MiB). */
export const MAX_RENDER_BYTES = 32 * 1024 * 1024;
/** The most bytes a render's headers may take as JSON (64 KiB). */
export const MAX_RENDER_HEADERS_BYTES = 64 * 1024;
/** The most named parts one render may carry. */
export const MAX_RENDER_PARTS = 64;
/** The longest part name, in UTF-8 bytes. */
export const MAX_PART_NAME_LENGTH = 256;
/** The most items one listRevisions page may hold. */
export const MAX_LIST_LIMIT = 1000;

/**
 * True when `s` holds no lone UTF-16 surrogate (one would be stored as U+FFFD and read back changed):
 * String.prototype.isWellFormed of Node 20, far cheaper than a regular expression on a large body.
 */
/** U+FFFD in UTF-8: what Buffer.from writes for a lone surrogate. */
const REPLACEMENT_CHARACTER = Buffer.from([0xef, 0xbf, 0xbd]);
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Encodes string bodies (the bodies are copied into their records at once). */
const bodyEncoder = new SlabTextEncoder();

/** One body of a render as bytes: the value (name "") or a part. */
export interface CheckedBody {
  name: string;
  /** True when it was given (and is read back) as a string. */
  text: boolean;
  bytes: Buffer;
}

/** A render's checked content. */
export interface CheckedContent {
  headers: Record<string, string>;
  /** Its headers as JSON (UTF-8). */
  headersJson: Buffer;
  /** The value first (name ""), then the parts in the order given. */
  bodies: CheckedBody[];
  /** Bodies, part names and headers: what MAX_RENDER_BYTES counts. */
  size: number;
}

function kind(x: unknown): string {
  return x === null ? 'null' : Array.isArray(x) ? 'an array' : typeof x;
}

/**
 * @throws InvalidArgumentError unless `title` is a non-empty string of at most MAX_KEY_FAMILY_LENGTH UTF-8 bytes.
 */
export function checkTitle(title: unknown): string {
  if (typeof title !== 'string') throw new InvalidArgumentError(`title must be a string, got ${kind(title)}`);
  if (title.length === 0) throw new InvalidArgumentError('title is empty; the minimum is 1 byte');
  const length = Buffer.byteLength(title, 'utf8');
  if (length > MAX_KEY_FAMILY_LENGTH) throw new InvalidArgumentError(`title is ${length} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`);
  if (!wellFormed(title)) throw new InvalidArgumentError('title holds a lone UTF-16 surrogate; it must be valid Unicode text');
  return title;
}

/** @throws InvalidArgumentError unless `rev` is a safe integer from 0 to 2^53 − 1. */
export function checkRev(rev: unknown): number {
  if (typeof rev !== 'number') throw new InvalidArgumentError(`rev must be a number, got ${kind(rev)}`);
  if (!Number.isInteger(rev)) throw new InvalidArgumentError(`rev is ${rev}; it must be an integer`);
  if (rev < 0) throw new InvalidArgumentError(`rev is ${rev}; the minimum is 0`);
  if (rev > MAX_REV) throw new InvalidArgumentError(`rev is ${rev}; the maximum is ${MAX_REV}`);
  return rev;
}

/** The canonical tid. @throws InvalidArgumentError unless it is a time-based (v1) UUID. */
export function checkTid(tid: unknown): string {
  return checkTimeUuid(tid, 'tid');
}

function checkBody(field: string, name: string, body: unknown): CheckedBody {
  if (typeof body === 'string') {
    const bytes = bodyEncoder.encode(body);
    // A lone surrogate is encoded as U+FFFD: only a body holding one can be ill-formed (and the scan costs less than the check).
    if (bytes.indexOf(REPLACEMENT_CHARACTER) >= 0 && !wellFormed(body)) {
      throw new InvalidArgumentError(`${field} holds a lone UTF-16 surrogate; give bytes (a Uint8Array) for anything that is not valid Unicode text`);
    }
    return { name, text: true, bytes };
  }
  if (body instanceof Uint8Array) return { name, text: false, bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  throw new InvalidArgumentError(`${field} must be a string or a Uint8Array, got ${kind(body)}`);
}

function checkHeaders(headers: unknown): { headers: Record<string, string>; json: Buffer } {
  if (headers === undefined || headers === null) return { headers: {}, json: Buffer.from('{}') };
  if (typeof headers !== 'object' || Array.isArray(headers)) throw new InvalidArgumentError(`headers must be an object of strings, got ${kind(headers)}`);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.length === 0) throw new InvalidArgumentError('a header name is empty; the minimum is 1 character');
    if (typeof value !== 'string') throw new InvalidArgumentError(`headers[${JSON.stringify(name)}] must be a string, got ${kind(value)}`);
    if (!wellFormed(name) || !wellFormed(value)) throw new InvalidArgumentError(`header ${JSON.stringify(name)} holds a lone UTF-16 surrogate`);
    out[name] = value;
  }
  const json = Buffer.from(JSON.stringify(out), 'utf8');
  if (json.length > MAX_RENDER_HEADERS_BYTES) throw new InvalidArgumentError(`headers are ${json.length} bytes as JSON; the maximum is ${MAX_RENDER_HEADERS_BYTES}`);
  return { headers: out, json };
}

function checkParts(parts: unknown): CheckedBody[] {
  if (parts === undefined || parts === null) return [];
  if (typeof parts !== 'object' || Array.isArray(parts) || parts instanceof Uint8Array) throw new InvalidArgumentError(`parts must be an object of named bodies, got ${kind(parts)}`);
  const entries = Object.entries(parts);
  if (entries.length > MAX_RENDER_PARTS) throw new InvalidArgumentError(`parts has ${entries.length} parts; the maximum is ${MAX_RENDER_PARTS}`);
  return entries.map(([name, body]) => {
    if (name.length === 0) throw new InvalidArgumentError('a part name is empty; the minimum is 1 byte');
    const length = Buffer.byteLength(name, 'utf8');
    if (length > MAX_PART_NAME_LENGTH) throw new InvalidArgumentError(`part name ${JSON.stringify(name.slice(0, 40))}… is ${length} bytes; the maximum is ${MAX_PART_NAME_LENGTH}`);
    if (!wellFormed(name)) throw new InvalidArgumentError('a part name holds a lone UTF-16 surrogate');
    return checkBody(`parts[${JSON.stringify(name)}]`, name, body);
  });
}

/**
 * Checks and encodes a render's value, headers and parts.
 * @throws InvalidArgumentError naming the field and the limit (MAX_RENDER_BYTES for them all together).
 */
export function checkContent(value: unknown, headers: unknown, parts: unknown): CheckedContent {
  const main = checkBody('value', '', value);
  if (main.bytes.length > MAX_RENDER_BYTES) throw new InvalidArgumentError(`value is ${main.bytes.length} bytes; the maximum is ${MAX_RENDER_BYTES}`);
  const h = checkHeaders(headers);
  const bodies = [main, ...checkParts(parts)];
  let size = h.json.length;
  for (const b of bodies) size += b.bytes.length + Buffer.byteLength(b.name, 'utf8');
  if (size > MAX_RENDER_BYTES) throw new InvalidArgumentError(`render is ${size} bytes (value, parts and headers); the maximum is ${MAX_RENDER_BYTES}`);
  return { headers: h.headers, headersJson: h.json, bodies, size };
}

/** The body as it was given: a string for text, a Buffer for bytes; with `asBytes`, the bytes either way. */
export function bodyOf(bytes: Buffer, text: boolean, asBytes = false): RenderBody {
  return text && !asBytes ? bytes.toString('utf8') : bytes;
}

/** @throws InvalidArgumentError unless `options` is a {@link ReadRenderOptions}; whether bodies are read as bytes. */
export function checkReadOptions(options: unknown): boolean {
  if (options === undefined) return false;
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${kind(options)}`);
  const bytes = (options as ReadRenderOptions).bytes;
  if (bytes !== undefined && typeof bytes !== 'boolean') throw new InvalidArgumentError(`options.bytes must be a boolean, got ${kind(bytes)}`);
  return bytes === true;
}

/**
 * `render` as a read asked for it: unchanged, or with `asBytes` its text bodies as their UTF-8 bytes.
 * For a render that did not come from a record (archived or just made); records decode as asked.
 */
export function readAs(render: Render | null, asBytes: boolean): Render | null {
  if (render === null || !asBytes) return render;
  const bytes = (b: RenderBody): Uint8Array => (typeof b === 'string' ? Buffer.from(b, 'utf8') : b);
  return { ...render, value: bytes(render.value), parts: Object.fromEntries(Object.entries(render.parts).map(([name, b]) => [name, bytes(b)])) };
}

/** @throws InvalidArgumentError unless `ms` is a positive safe integer number of milliseconds. */
export function checkDuration(name: string, ms: unknown): number {
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms)) throw new InvalidArgumentError(`${name} must be an integer number of milliseconds, got ${typeof ms === 'number' ? ms : kind(ms)}`);
  if (ms < 1) throw new InvalidArgumentError(`${name} is ${ms}; the minimum is 1`);
  return ms;
}

/** @throws InvalidArgumentError unless `limit` is an integer from 1 to MAX_LIST_LIMIT. */
export function checkLimit(limit: unknown): number {
  if (limit === undefined) return 10;
  if (typeof limit !== 'number' || !Number.isInteger(limit)) throw new InvalidArgumentError(`limit must be an integer, got ${typeof limit === 'number' ? limit : kind(limit)}`);
  if (limit < 1) throw new InvalidArgumentError(`limit is ${limit}; the minimum is 1`);
  if (limit > MAX_LIST_LIMIT) throw new InvalidArgumentError(`limit is ${limit}; the maximum is ${MAX_LIST_LIMIT}`);
  return limit;
}
