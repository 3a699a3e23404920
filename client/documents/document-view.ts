/**
 * How a stored leaf reads as a CouchDB document: the body's members beside `_id`, `_rev`, and on
 * request `_deleted`, `_conflicts`, `_deleted_conflicts` and `_revisions`. Shared by every read
 * (get, openRevs, allDocs).
 */
import type { LeafWithBody } from './document-reads';
import { Branch, revisionsOf, revOf } from './rev-tree';
import type { DocumentBody, StoredDocument } from './types';

/** What a read adds to the document: the other leaves' names, and which members to add. */
export interface DocumentViewOptions {
  /** Every leaf of the document (key order: the winner last); empty when neither conflicts list is asked for. */
  names: readonly Branch[];
  conflicts: boolean;
  deletedConflicts: boolean;
  revs: boolean;
}

/** The document a leaf reads as. */
export function documentOf(id: string, leaf: LeafWithBody, o: DocumentViewOptions): StoredDocument {
  const doc = { _id: id, _rev: revOf(leaf), ...(JSON.parse(leaf.body) as DocumentBody) } as StoredDocument;
  if (leaf.deleted) doc._deleted = true;
  const others = o.names.filter((b) => !(b.pos === leaf.pos && b.hash === leaf.hash && b.deleted === leaf.deleted)).reverse();
  if (o.conflicts) {
    const live = others.filter((b) => !b.deleted).map(revOf);
    if (live.length > 0) doc._conflicts = live;
  }
  if (o.deletedConflicts) {
    const dead = others.filter((b) => b.deleted).map(revOf);
    if (dead.length > 0) doc._deleted_conflicts = dead;
  }
  if (o.revs) doc._revisions = revisionsOf(leaf);
  return doc;
}
