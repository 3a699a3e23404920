/**
 * Documents as CouchDB clients send them, made into what DocumentStore takes: the special members it
 * knows (`_id`, `_rev`, `_deleted`, `_revisions`) kept, the ones CouchDB ignores on a write
 * (`_conflicts`, `_deleted_conflicts`, `_revs_info`, `_local_seq`) and an empty `_attachments`
 * dropped, attachments refused (415), and any other member starting with `_` refused as CouchDB does
 * (400 `doc_validation`) — all before anything is written.
 */
import { randomUUID } from 'node:crypto';
import { attachmentsRefused, badRequest, CouchError } from './errors';

const KEPT = new Set(['_id', '_rev', '_deleted', '_revisions']);
const IGNORED = new Set(['_conflicts', '_deleted_conflicts', '_revs_info', '_local_seq']);

/** A new document id: 32 hex digits, as CouchDB's own uuids. */
export function newDocumentId(): string {
  return randomUUID().replace(/-/g, '');
}

/** What `value` is, for a message. */
export function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/**
 * The document `raw` (named `field` in errors) as DocumentStore takes it.
 * @throws CouchError 400 for a non-object or an unknown `_` member, 415 for attachments.
 */
export function storeDocument(raw: unknown, field: string): Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest(`${field} must be a JSON object, got ${kindOf(raw)}`);
  const doc: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!key.startsWith('_') || KEPT.has(key)) doc[key] = value;
    else if (key === '_attachments') {
      if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) {
        const id = (raw as { _id?: unknown })._id;
        throw attachmentsRefused(`${field}${typeof id === 'string' ? ` (document ${JSON.stringify(id)})` : ''} has _attachments`);
      }
    } else if (!IGNORED.has(key)) {
      throw new CouchError(400, 'doc_validation', `Bad special document member: ${key} (in ${field}; members starting with "_" are CouchDB's: _id, _rev, _deleted, _revisions, _attachments)`);
    }
  }
  return doc;
}

/** The body of a document without its special members (what a local document or an edit keeps). */
export function bodyOf(doc: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) if (!KEPT.has(k)) body[k] = v;
  return body;
}

/** `_deleted` of a document: a boolean, absent is false. */
export function deletedOf(doc: Record<string, unknown>, field: string): boolean {
  const d = doc._deleted;
  if (d === undefined) return false;
  if (typeof d !== 'boolean') throw badRequest(`${field}._deleted must be true or false, got ${kindOf(d)}`);
  return d;
}

/**
 * The rev of a write: the `rev` query parameter or the body's `_rev`, which must agree.
 * @throws CouchError 400 when both are given and differ, or `_rev` is not a string.
 */
export function revOfWrite(doc: Record<string, unknown>, queryRev: string | undefined, field: string): string | undefined {
  const bodyRev = doc._rev;
  if (bodyRev !== undefined && typeof bodyRev !== 'string') throw badRequest(`${field}._rev must be a string, got ${kindOf(bodyRev)}`);
  if (queryRev !== undefined && bodyRev !== undefined && queryRev !== bodyRev) {
    throw badRequest(`Document rev from request body and query string have different values (${JSON.stringify(bodyRev)} and ${JSON.stringify(queryRev)})`);
  }
  return queryRev ?? bodyRev;
}
