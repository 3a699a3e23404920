/**
 * Local documents (CouchDB's `_local/<id>`): the replication checkpoints a replicator keeps on both
 * ends. They are not replicated, have no revision tree and are never listed by changes or allDocs.
 * Each is one entry of its own family `l/<id>`; its rev is `0-<n>`, n counting its writes, as CouchDB
 * writes local revs. A write names the rev it replaces (none to create), checked by the entry's
 * version, so of two writers at one rev exactly one succeeds.
 *
 * ```
 * value: count (4, BE) · body (canonical JSON)
 * ```
 */
import { BadKeyVersionError, ConditionalTableUpdateError, DocumentConflictError, InvalidArgumentError } from '../errors';
import type { TableEntry } from '../types';
import { canonicalBody } from './canonical-json';
import { MAX_DOCUMENT_BYTES, MAX_DOCUMENT_ID_LENGTH } from './document-input';
import type { BytesTable } from './document-reads';
import { LOCAL_KEY, localFamily } from './key-layout';
import { describe } from './rev-id';
import type { DocumentBody, DocumentWriteResult, LocalDocument } from './types';

/** The prefix CouchDB gives local document ids. */
export const LOCAL_ID_PREFIX = '_local/';
/** The most writes a local document counts (its rev's number, 4 bytes). */
const MAX_LOCAL_REV = 0xffff_ffff;
const LOCAL_REV_FORM = /^0-([1-9][0-9]{0,9})$/;
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** @throws InvalidArgumentError unless `id` is a well-formed string of 1 to MAX_DOCUMENT_ID_LENGTH UTF-8 bytes. */
export function checkLocalId(id: unknown, field = 'id'): string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidArgumentError(`${field} must be a non-empty string, got ${describe(id)}`);
  if (LONE_SURROGATE.test(id)) throw new InvalidArgumentError(`${field} ${describe(id)} has a lone surrogate: it is not valid UTF-16`);
  const bytes = Buffer.byteLength(id, 'utf8');
  if (bytes > MAX_DOCUMENT_ID_LENGTH) throw new InvalidArgumentError(`${field} is ${bytes} bytes; the maximum is ${MAX_DOCUMENT_ID_LENGTH}`);
  return id;
}

/** The count of a local rev `0-<n>`. @throws InvalidArgumentError for another form. */
export function parseLocalRev(rev: unknown, field: string): number {
  const match = typeof rev === 'string' ? LOCAL_REV_FORM.exec(rev) : null;
  const n = match ? Number(match[1]) : NaN;
  if (!(n <= MAX_LOCAL_REV)) throw new InvalidArgumentError(`${field} ${describe(rev)} is not a local document rev; expected "0-<n>" (n 1 to ${MAX_LOCAL_REV})`);
  return n;
}

function encodeLocal(count: number, body: string): Buffer {
  const text = Buffer.from(body, 'utf8');
  const out = Buffer.allocUnsafe(4 + text.length);
  out.writeUInt32BE(count, 0);
  text.copy(out, 4);
  return out;
}

function decodeLocal(bytes: Uint8Array): { count: number; body: string } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 6) throw new InvalidArgumentError(`not a local document entry (${b.length} bytes)`);
  return { count: b.readUInt32BE(0), body: b.toString('utf8', 4) };
}

const revOf = (count: number): string => `0-${count}`;

/** The local documents of a store's table. */
export class LocalDocuments {
  constructor(private readonly table: BytesTable) {}

  /** The local document `id` (after `_local/`), or null. */
  async get(id: string): Promise<LocalDocument | null> {
    const entry = await this.table.get(localFamily(id), LOCAL_KEY);
    if (entry === null) return null;
    const { count, body } = decodeLocal(entry.value);
    return { _id: LOCAL_ID_PREFIX + id, _rev: revOf(count), ...(JSON.parse(body) as DocumentBody) };
  }

  /**
   * Writes local document `id`: creates it (no rev) or replaces it at `rev`.
   * @throws DocumentConflictError when it exists (no rev) or is not at `rev`; InvalidArgumentError for a bad body.
   */
  async put(id: string, body: DocumentBody, rev: number | null): Promise<DocumentWriteResult> {
    const canonical = canonicalBody(body, `the body of local document ${describe(id)}`);
    const bytes = 4 + Buffer.byteLength(canonical, 'utf8');
    if (bytes > MAX_DOCUMENT_BYTES) throw new InvalidArgumentError(`local document ${describe(id)} is ${bytes} bytes; the maximum is ${MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)`);
    const family = localFamily(id);
    if (rev === null) {
      try {
        await this.table.putIfAbsent(family, LOCAL_KEY, encodeLocal(1, canonical));
      } catch (err) {
        if (err instanceof BadKeyVersionError) throw conflict(id, 'it exists; give its _rev to replace it', err);
        throw err;
      }
      return { id: LOCAL_ID_PREFIX + id, rev: revOf(1) };
    }
    const current = await this.current(id, rev);
    if (current.count >= MAX_LOCAL_REV) throw new InvalidArgumentError(`local document ${describe(id)} was written ${MAX_LOCAL_REV} times; the maximum is ${MAX_LOCAL_REV}`);
    try {
      await this.table.replace(family, LOCAL_KEY, encodeLocal(current.count + 1, canonical), current.entry.version);
    } catch (err) {
      if (err instanceof ConditionalTableUpdateError) throw conflict(id, `it changed since rev ${revOf(rev)} was read`, err);
      throw err;
    }
    return { id: LOCAL_ID_PREFIX + id, rev: revOf(current.count + 1) };
  }

  /** Removes local document `id` at `rev`: true when removed, false when there is none. @throws DocumentConflictError when it is not at `rev`. */
  async remove(id: string, rev: number): Promise<boolean> {
    const entry = await this.table.get(localFamily(id), LOCAL_KEY);
    if (entry === null) return false;
    const current = await this.current(id, rev, entry);
    try {
      await this.table.remove(localFamily(id), LOCAL_KEY, current.entry.version);
    } catch (err) {
      if (err instanceof ConditionalTableUpdateError) throw conflict(id, `it changed since rev ${revOf(rev)} was read`, err);
      throw err;
    }
    return true;
  }

  /** The entry of local document `id`, which must be at `rev`. */
  private async current(id: string, rev: number, read?: TableEntry<Uint8Array, Uint8Array>): Promise<{ entry: TableEntry<Uint8Array, Uint8Array>; count: number }> {
    const entry = read ?? (await this.table.get(localFamily(id), LOCAL_KEY));
    if (entry === null) throw conflict(id, `it does not exist (rev ${revOf(rev)} was given)`);
    const { count } = decodeLocal(entry.value);
    if (count !== rev) throw conflict(id, `it is at rev ${revOf(count)}, not ${revOf(rev)}`);
    return { entry, count };
  }
}

function conflict(id: string, why: string, cause?: unknown): DocumentConflictError {
  return new DocumentConflictError(`local document ${describe(id)}: ${why}`, { key: LOCAL_ID_PREFIX + id, ...(cause === undefined ? {} : { cause }) });
}
