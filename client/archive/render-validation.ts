/**
 * Checks of what the archive is given, before anything is written: each failure is an
 * InvalidArgumentError naming the field and its limit.
 */
import { InvalidArgumentError } from '../errors';
import { MAX_KEY_FAMILY_LENGTH } from '../limits';
import type { ArchivedRender, ArchiveStoreOptions } from './archive-store';
import { defaultArchiveStoreOptions } from './archive-store';
import { encodeRecord, EncodedRecord } from './record-codec';
import { isTimeUuid } from './tid';

/** The largest rev: any non-negative safe integer. */
export const MAX_ARCHIVED_REV = Number.MAX_SAFE_INTEGER;
/**
 * The largest render the archive takes, encoded (bodies, part names, headers and framing): 8 MiB, so
 * that a block (at most 8 MiB raw, or one render) is one kvt batch and one Cassandra mutation.
 */
export const MAX_ARCHIVED_RENDER_BYTES = 8 * 1024 * 1024;

const fmt = (n: number): string => n.toLocaleString('en-US');

/** Checks a title. @throws InvalidArgumentError */
export function checkTitle(title: unknown, field = 'title'): string {
  if (typeof title !== 'string' || title.length === 0) throw new InvalidArgumentError(`${field} must be a non-empty string, got ${title === '' ? 'an empty string' : typeof title}`);
  if (title.includes('\u0000')) throw new InvalidArgumentError(`${field} contains U+0000, which the archive reserves`);
  const bytes = Buffer.byteLength(title, 'utf8');
  if (bytes > MAX_KEY_FAMILY_LENGTH) throw new InvalidArgumentError(`${field} is ${fmt(bytes)} bytes; the maximum is ${fmt(MAX_KEY_FAMILY_LENGTH)}`);
  return title;
}

/** Checks a rev. @throws InvalidArgumentError */
export function checkRev(rev: unknown, field = 'rev'): number {
  if (typeof rev !== 'number' || !Number.isInteger(rev) || rev < 0 || rev > MAX_ARCHIVED_REV) {
    throw new InvalidArgumentError(`${field} is ${typeof rev === 'number' ? rev : typeof rev}; it must be an integer from 0 to ${MAX_ARCHIVED_REV}`);
  }
  return rev;
}

/** Checks a tid. @throws InvalidArgumentError */
export function checkTid(tid: unknown, field = 'tid'): string {
  if (!isTimeUuid(tid)) throw new InvalidArgumentError(`${field} is ${JSON.stringify(tid) ?? String(tid)}; it must be a time-based (version 1) UUID`);
  return tid;
}

function checkParts(parts: unknown, field: string): void {
  if (parts === undefined) return;
  if (parts === null || typeof parts !== 'object' || Array.isArray(parts)) throw new InvalidArgumentError(`${field} must be an object of string or Uint8Array bodies`);
  for (const [name, body] of Object.entries(parts)) {
    if (name.length === 0) throw new InvalidArgumentError(`${field} has a part with an empty name`);
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) throw new InvalidArgumentError(`${field}[${JSON.stringify(name)}] is ${typeof body}; it must be a string or a Uint8Array`);
  }
}

function checkHeaders(headers: unknown, field: string): void {
  if (headers === undefined) return;
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) throw new InvalidArgumentError(`${field} must be an object of string values`);
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw new InvalidArgumentError(`${field}[${JSON.stringify(name)}] is ${typeof value}; header values must be strings`);
  }
}

/** Checks one render and encodes it. @throws InvalidArgumentError naming `renders[i].field` */
export function checkRender(render: ArchivedRender, index: number): EncodedRecord {
  const at = `renders[${index}]`;
  if (render === null || typeof render !== 'object') throw new InvalidArgumentError(`${at} must be a render object`, { index });
  try {
    checkTitle(render.title, `${at}.title`);
    checkRev(render.rev, `${at}.rev`);
    checkTid(render.tid, `${at}.tid`);
    if (typeof render.value !== 'string' && !(render.value instanceof Uint8Array)) throw new InvalidArgumentError(`${at}.value must be a string or a Uint8Array, got ${typeof render.value}`);
    checkHeaders(render.headers, `${at}.headers`);
    checkParts(render.parts, `${at}.parts`);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new InvalidArgumentError(err.message, { index });
    throw err;
  }
  const record = encodeRecord(render);
  if (record.bytes.length > MAX_ARCHIVED_RENDER_BYTES) {
    throw new InvalidArgumentError(`${at} (bodies and headers) is ${fmt(record.bytes.length)} bytes encoded; the maximum is ${fmt(MAX_ARCHIVED_RENDER_BYTES)}`, { index });
  }
  return record;
}

function checkInteger(options: ArchiveStoreOptions, name: keyof ArchiveStoreOptions, min: number, max: number): void {
  const value = options[name];
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} is ${String(value)}; it must be an integer from ${fmt(min)} to ${fmt(max)}`);
  }
}

/** Checks the options and fills in the defaults. @throws InvalidArgumentError naming the option and its limits */
export function resolveArchiveOptions(options: ArchiveStoreOptions = {}): Required<ArchiveStoreOptions> {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('archive options must be an object');
  checkInteger(options, 'blockRevisions', 1, 1000);
  checkInteger(options, 'blockBytes', 1024, 8 * 1024 * 1024);
  checkInteger(options, 'quality', 0, 11);
  checkInteger(options, 'windowBits', 10, 24);
  checkInteger(options, 'cacheBytes', 0, 16 * 1024 * 1024 * 1024);
  checkInteger(options, 'concurrency', 1, 256);
  if (options.flushOnClose !== undefined && typeof options.flushOnClose !== 'boolean') throw new InvalidArgumentError(`flushOnClose is ${typeof options.flushOnClose}; it must be a boolean`);
  const defaults = defaultArchiveStoreOptions();
  const pick = <K extends keyof ArchiveStoreOptions>(k: K): Required<ArchiveStoreOptions>[K] => (options[k] ?? defaults[k]) as Required<ArchiveStoreOptions>[K];
  return {
    blockRevisions: pick('blockRevisions'),
    blockBytes: pick('blockBytes'),
    quality: pick('quality'),
    windowBits: pick('windowBits'),
    cacheBytes: pick('cacheBytes'),
    concurrency: pick('concurrency'),
    flushOnClose: pick('flushOnClose'),
  };
}
