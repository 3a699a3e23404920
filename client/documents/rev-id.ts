/**
 * Revision ids, `"<pos>-<hash>"` as CouchDB writes them: `pos` counts the edits from the root (1 for
 * a new document), `hash` names the edit. A hash made here is a digest of the parent rev, the deleted
 * flag and the body in canonical JSON (canonical-json.ts), so the same edit made on two replicas gets
 * the same rev; hashes replicated in (`bulkDocs` with `newEdits: false`) are taken as sent.
 */
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors';

/** The greatest revision position (a 4-byte key field). */
export const MAX_REV_POS = 0x7fff_ffff;
/** The longest revision hash accepted (CouchDB's and PouchDB's are 32 hex digits). */
export const MAX_REV_HASH_LENGTH = 128;

const HASH_FORM = /^[0-9A-Za-z]+$/;
const REV_FORM = /^([1-9][0-9]{0,9})-([0-9A-Za-z]+)$/;

/** A parsed revision id. */
export interface RevId {
  pos: number;
  hash: string;
}

/** `"<pos>-<hash>"`. */
export function formatRev(pos: number, hash: string): string {
  return `${pos}-${hash}`;
}

/**
 * Parses a rev id; `field` names it in the error.
 * @throws InvalidArgumentError for anything but `"<pos>-<hash>"` with pos 1…2^31−1 and 1–128 letters or digits of hash.
 */
export function parseRev(text: unknown, field: string): RevId {
  const match = typeof text === 'string' ? REV_FORM.exec(text) : null;
  if (!match) throw new InvalidArgumentError(`${field} ${describe(text)} is not a revision id; expected "<pos>-<hash>" (pos 1 to ${MAX_REV_POS}, hash letters and digits)`);
  const pos = Number(match[1]);
  if (pos > MAX_REV_POS) throw new InvalidArgumentError(`${field} ${describe(text)} has position ${pos}; the maximum is ${MAX_REV_POS}`);
  checkHash(match[2], field);
  return { pos, hash: match[2] };
}

/** @throws InvalidArgumentError unless `hash` is 1–128 letters or digits. */
export function checkHash(hash: unknown, field: string): string {
  if (typeof hash !== 'string' || !HASH_FORM.test(hash)) throw new InvalidArgumentError(`${field} ${describe(hash)} is not a revision hash; expected letters and digits`);
  if (hash.length > MAX_REV_HASH_LENGTH) throw new InvalidArgumentError(`${field} is a revision hash of ${hash.length} characters; the maximum is ${MAX_REV_HASH_LENGTH}`);
  return hash;
}

/** The hash of an edit: 32 hex digits of SHA-256 over (parent rev, deleted, canonical body). */
export function editHash(parent: string | null, deleted: boolean, canonicalBody: string): string {
  return createHash('sha256')
    .update(`${parent ?? ''}\n${deleted ? 1 : 0}\n`)
    .update(canonicalBody)
    .digest('hex')
    .slice(0, 32);
}

/** A value as an error message shows it. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : String(value);
}
