/**
 * The keys of the document store (see docs/documents.md). Two kinds of key family share the table:
 *
 * - a document's family, `d/<id>`: one entry per leaf of its revision tree and one head entry.
 *   ```
 *   0x01 · live (1: 0x00 deleted, 0x01 not deleted) · pos (4, BE) · hash (ASCII)   leaf: ancestors + body (leaf-codec.ts)
 *   0x02                                                                          head: winner, leaf count, the live winner's body
 *                                                                                 (head-codec.ts); its version is the document's sequence
 *   ```
 *   Leaves sort by (not deleted, pos, hash), so the winning leaf is the last one of kind 0x01: one
 *   reverse iterator page of one key reads it (the head repeats its body for plain reads).
 * - a changes feed family per partition, `c/<k>` (feed-layout.ts picks the names that land one per
 *   partition), indexing the documents of that partition:
 *   ```
 *   0x01 · seq (8, BE)           change: (id, winning rev, deleted, time) of a document's newest change
 *   0x02 · id (UTF-8)            the seq of the document's change entry (at most one per document), and
 *                                whether its winner is deleted (feed-counts.ts)
 *   0x03 · token (8) · id        marker: an edit of the document is under way (see feed-index.ts)
 *   0x04                         clock: a reader's write, whose version bounds what it may list
 *   0x05                         the document counts folded so far (feed-counts.ts)
 *   0x05 · token (8)             a change of the document counts, written with the index update making it
 *   ```
 * - a local document's family, `l/<id>` (CouchDB's `_local/<id>`: replication checkpoints, never
 *   replicated nor listed): one entry, key `0x01`, value local-documents.ts.
 */
import { InvalidArgumentError } from '../errors';

/** Prefix of document families. */
export const DOCUMENT_FAMILY_PREFIX = 'd/';
/** Prefix of changes feed families. */
export const FEED_FAMILY_PREFIX = 'c/';
/** Prefix of local documents' families. */
export const LOCAL_FAMILY_PREFIX = 'l/';

/** The kinds of a document family's keys. */
export const DOC_KIND = { LEAF: 0x01, HEAD: 0x02 } as const;
/** The kinds of a feed family's keys. */
export const FEED_KIND = { CHANGE: 0x01, ID: 0x02, MARKER: 0x03, CLOCK: 0x04, COUNT: 0x05 } as const;

/** The prefix of every leaf key: the leaves of a document. */
export const LEAF_PREFIX: Buffer = Buffer.of(DOC_KIND.LEAF);
/** The head key of a document family. */
export const HEAD_KEY: Buffer = Buffer.of(DOC_KIND.HEAD);
/** The prefix of a feed family's change entries. */
export const CHANGE_PREFIX: Buffer = Buffer.of(FEED_KIND.CHANGE);
/** The prefix of a feed family's markers. */
export const MARKER_PREFIX: Buffer = Buffer.of(FEED_KIND.MARKER);
/** A feed family's clock key. */
export const CLOCK_KEY: Buffer = Buffer.of(FEED_KIND.CLOCK);
/** Just past every change entry of a feed family (an exclusive upper bound). */
export const CHANGE_END: Buffer = Buffer.of(FEED_KIND.CHANGE + 1);
/** The prefix of a feed family's id entries. */
export const ID_PREFIX: Buffer = Buffer.of(FEED_KIND.ID);
/** Just past every id entry of a feed family (an exclusive upper bound). */
export const ID_END: Buffer = Buffer.of(FEED_KIND.ID + 1);
/** A feed family's document count summary, and the prefix of its count deltas (feed-counts.ts). */
export const COUNT_PREFIX: Buffer = Buffer.of(FEED_KIND.COUNT);
/** Bytes of a count delta's token. */
export const COUNT_TOKEN_BYTES = 8;
/** The one key of a local document's family. */
export const LOCAL_KEY: Buffer = Buffer.of(0x01);

/** Bytes of a marker's token. */
export const MARKER_TOKEN_BYTES = 8;

/** A leaf as its key names it. */
export interface LeafName {
  deleted: boolean;
  pos: number;
  hash: string;
}

/** The family of document `id`. */
export function documentFamily(id: string): string {
  return DOCUMENT_FAMILY_PREFIX + id;
}

/** The family of local document `id` (the part after `_local/`). */
export function localFamily(id: string): string {
  return LOCAL_FAMILY_PREFIX + id;
}

/** The key of a leaf. */
export function leafKey(deleted: boolean, pos: number, hash: string): Buffer {
  const key = Buffer.allocUnsafe(6 + hash.length);
  key[0] = DOC_KIND.LEAF;
  key[1] = deleted ? 0 : 1;
  key.writeUInt32BE(pos, 2);
  key.write(hash, 6, 'latin1');
  return key;
}

/** The leaf a key names. @throws InvalidArgumentError for a key that is not a leaf key. */
export function parseLeafKey(key: Uint8Array): LeafName {
  if (key.length < 7 || key[0] !== DOC_KIND.LEAF || key[1] > 1) throw new InvalidArgumentError(`not a document leaf key: ${Buffer.from(key).toString('hex').slice(0, 64)}`);
  const b = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return { deleted: b[1] === 0, pos: b.readUInt32BE(2), hash: b.toString('latin1', 6) };
}

/** The key of the change entry at `seq`. */
export function changeKey(seq: bigint): Buffer {
  const key = Buffer.allocUnsafe(9);
  key[0] = FEED_KIND.CHANGE;
  key.writeBigUInt64BE(seq, 1);
  return key;
}

/** The seq of a change entry's key. */
export function seqOfChangeKey(key: Uint8Array): bigint {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).readBigUInt64BE(1);
}

/** The key holding the seq of document `id`'s change entry. */
export function idKey(id: string): Buffer {
  const utf8 = Buffer.from(id, 'utf8');
  const key = Buffer.allocUnsafe(1 + utf8.length);
  key[0] = FEED_KIND.ID;
  utf8.copy(key, 1);
  return key;
}

/** The document an id entry's key names. */
export function idOfIdKey(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8', 1);
}

/** The key of a marker of an edit of document `id`. */
export function markerKey(token: Uint8Array, id: string): Buffer {
  return Buffer.concat([MARKER_PREFIX, token, Buffer.from(id, 'utf8')]);
}

/** The document a marker key names. */
export function idOfMarkerKey(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8', 1 + MARKER_TOKEN_BYTES);
}
