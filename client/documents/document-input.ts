/**
 * Checks of the document store's arguments: each names the field and the limit it breaks, before
 * anything is written.
 */
import { InvalidArgumentError } from '../errors';
import { MAX_KEY_FAMILY_LENGTH, MAX_VALUE_LENGTH } from '../limits';
import { canonicalBody } from './canonical-json';
import { DOCUMENT_FAMILY_PREFIX } from './key-layout';
import { leafValueLength } from './leaf-codec';
import { checkHash, describe, parseRev, RevId } from './rev-id';
import type { RevisionPath } from './rev-tree';

/** With the u flag a surrogate pair is one code point, so this matches lone surrogates only. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** The longest document id, in UTF-8 bytes (its family is `d/<id>`). */
export const MAX_DOCUMENT_ID_LENGTH = MAX_KEY_FAMILY_LENGTH - DOCUMENT_FAMILY_PREFIX.length;
/** The largest leaf entry: a body in canonical JSON with the ancestors its branch keeps (one table value). */
export const MAX_DOCUMENT_BYTES = MAX_VALUE_LENGTH;
/** revsLimit's default and range (CouchDB's default; the seed's maximum). */
export const DEFAULT_REVS_LIMIT = 1000;
export const MAX_REVS_LIMIT = 4000;

/**
 * @throws InvalidArgumentError unless `id` is a non-empty well-formed string of at most
 *   MAX_DOCUMENT_ID_LENGTH UTF-8 bytes that does not start with `_` (except `_design/`).
 */
export function checkId(id: unknown, field = 'id'): string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidArgumentError(`${field} must be a non-empty string, got ${describe(id)}`);
  if (LONE_SURROGATE.test(id)) throw new InvalidArgumentError(`${field} ${describe(id)} has a lone surrogate: it is not valid UTF-16`);
  if (id.startsWith('_') && !id.startsWith('_design/')) throw new InvalidArgumentError(`${field} ${describe(id)} starts with "_": only "_design/" ids may`);
  const bytes = Buffer.byteLength(id, 'utf8');
  if (bytes > MAX_DOCUMENT_ID_LENGTH) throw new InvalidArgumentError(`${field} is ${bytes} bytes; the maximum is ${MAX_DOCUMENT_ID_LENGTH}`);
  return id;
}

/** The canonical body, checked against MAX_DOCUMENT_BYTES on its own. */
export function checkBody(body: unknown, id: string): string {
  const canonical = canonicalBody(body, `the body of document ${describe(id)}`);
  checkLeafSize(id, [], canonical);
  return canonical;
}

/** @throws InvalidArgumentError when a leaf with these ancestors and body would exceed one value. */
export function checkLeafSize(id: string, ancestors: readonly string[], body: string): void {
  const n = leafValueLength(ancestors, body);
  if (n <= MAX_DOCUMENT_BYTES) return;
  const path = ancestors.length === 0 ? '' : ` with its revision path of ${ancestors.length} ancestors`;
  throw new InvalidArgumentError(`document ${describe(id)} is ${n} bytes${path}; the maximum is ${MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)`);
}

/** An optional rev. */
export function checkOptionalRev(rev: unknown, field: string): RevId | null {
  return rev === undefined ? null : parseRev(rev, field);
}

/** A boolean option (absent: false). */
export function checkFlag(value: unknown, field: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`${field} must be a boolean, got ${describe(value)}`);
  return value;
}

/** An options object (absent: {}). */
export function checkOptions<T extends object>(options: T | undefined, what: string): Partial<T> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError(`${what} must be an object, got ${describe(options)}`);
  return options;
}

/** @throws InvalidArgumentError unless `n` is an integer from `min` to `max`. */
export function checkInteger(n: unknown, field: string, min: number, max: number): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${field} is ${describe(n)}; it must be an integer from ${min} to ${max}`);
  return n;
}

/** The path of a replicated document: `_revisions` when given, else the rev alone. */
export function checkPath(rev: RevId, revisions: unknown, deleted: boolean, field: string): RevisionPath {
  if (revisions === undefined) return { pos: rev.pos, ids: [rev.hash], deleted };
  const r = revisions as { start?: unknown; ids?: unknown };
  if (r === null || typeof r !== 'object' || !Array.isArray(r.ids)) throw new InvalidArgumentError(`${field}._revisions must be { start, ids }, got ${describe(revisions)}`);
  if (r.start !== rev.pos) throw new InvalidArgumentError(`${field}._revisions.start is ${describe(r.start)}; it must be the position of _rev (${rev.pos})`);
  const ids = r.ids as unknown[];
  if (ids.length === 0 || ids[0] !== rev.hash) throw new InvalidArgumentError(`${field}._revisions.ids must start with the hash of _rev (${rev.hash})`);
  if (ids.length > rev.pos) throw new InvalidArgumentError(`${field}._revisions.ids has ${ids.length} revisions; a path ending at position ${rev.pos} has at most ${rev.pos}`);
  ids.forEach((h, i) => checkHash(h, `${field}._revisions.ids[${i}]`));
  return { pos: rev.pos, ids: ids as string[], deleted };
}
