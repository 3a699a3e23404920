/**
 * The plan of an interactive edit (put / remove) from what the edit read: the rules of CouchDB on
 * FoundationDB (seed 001) —
 *
 * - no rev: create the document when it has no leaf; re-create it when every leaf is deleted (the
 *   new leaf extends the winning deleted branch); a live document, or creating a deleted one as
 *   deleted again, is a conflict;
 * - a rev: extend that leaf when it is live; a stale, unknown or deleted leaf's rev is a conflict.
 *
 * The update removes the extended leaf, writes the new one and the head (the winner after the edit
 * and the leaf count), conditioned on the head's version read: every edit writes the head, so a
 * concurrent edit of the document fails it.
 */
import { DocumentConflictError } from '../errors';
import type { TableModification } from '../types';
import { Version } from '../version';
import type { DocumentState, StoredLeaf } from './document-reads';
import { checkLeafSize } from './document-input';
import { encodeHead } from './head-codec';
import { HEAD_KEY, LeafName, leafKey } from './key-layout';
import { encodeLeafValue } from './leaf-codec';
import { editHash, formatRev, RevId } from './rev-id';
import { Branch, childAncestors, compareBranches, revOf } from './rev-tree';

/** An interactive edit. */
export interface EditRequest {
  id: string;
  rev: RevId | null;
  deleted: boolean;
  /** The body in canonical JSON. */
  body: string;
}

/** What an edit writes. */
export interface EditPlan {
  modifications: TableModification<Uint8Array, Uint8Array>[];
  /** Index of the head's modification: its version is the change's seq. */
  headIndex: number;
  /** The new leaf's rev. */
  rev: string;
  /** The winning leaf after the edit. */
  winner: LeafName;
  /** The edit creates the document (it had no head). */
  created: boolean;
}

/** The leaf an edit extends: none (a creation), a leaf read (`extend`), or the deleted winner to read (`recreate`). */
export type EditParent = { kind: 'create' } | { kind: 'extend'; leaf: StoredLeaf } | { kind: 'recreate'; winner: LeafName };

/**
 * Which leaf the edit extends, by the rules above.
 * @throws DocumentConflictError when the rules refuse the edit.
 */
export function editParent(req: EditRequest, state: DocumentState): EditParent {
  const { winner, target } = state;
  if (req.rev === null) {
    if (winner === null) return { kind: 'create' };
    const rev = formatRev(winner.pos, winner.hash);
    if (!winner.deleted) throw new DocumentConflictError(`document "${req.id}" exists (rev ${rev}): an edit of it must give the rev it extends`, { key: req.id });
    if (req.deleted) throw new DocumentConflictError(`document "${req.id}" is deleted (rev ${rev}): it cannot be created as deleted again`, { key: req.id });
    // Every leaf is deleted: re-creating extends the winning deleted branch (CouchDB's behaviour).
    return { kind: 'recreate', winner };
  }
  const rev = formatRev(req.rev.pos, req.rev.hash);
  if (target === null) throw new DocumentConflictError(`document "${req.id}" has no leaf ${rev}: the rev is stale or unknown`, { key: req.id });
  if (target.deleted) throw new DocumentConflictError(`rev ${rev} of document "${req.id}" is a deleted leaf: edit a live leaf, or re-create the document without a rev`, { key: req.id });
  return { kind: 'extend', leaf: target };
}

/** True when the leaves are the same. */
export function sameLeaf(a: LeafName | null, b: LeafName | null): boolean {
  return a !== null && b !== null && a.pos === b.pos && a.hash === b.hash && a.deleted === b.deleted;
}

/** True when the winner after the edit needs the runner-up: a deletion of the winner of several leaves. */
export function needsRunnerUp(req: EditRequest, state: DocumentState, parent: StoredLeaf | null): boolean {
  return req.deleted && parent !== null && state.leafCount > 1 && sameLeaf(parent, state.winner);
}

/**
 * Plans the edit extending `parent` (null: a creation); `runnerUp` is the second-best leaf when
 * {@link needsRunnerUp}.
 * @throws InvalidArgumentError when the new leaf would exceed one value.
 */
export function planEdit(req: EditRequest, state: DocumentState, parent: StoredLeaf | null, runnerUp: StoredLeaf | null, revsLimit: number): EditPlan {
  const pos = parent === null ? 1 : parent.pos + 1;
  const hash = editHash(parent === null ? null : revOf(parent), req.deleted, req.body);
  const leaf: Branch = { pos, hash, deleted: req.deleted, ancestors: parent === null ? [] : childAncestors(parent, revsLimit) };
  checkLeafSize(req.id, leaf.ancestors, req.body);
  const { winner, body } = winnerAfter(state, parent, { ...leaf, body: req.body }, runnerUp);
  const leafCount = parent === null ? state.leafCount + 1 : state.leafCount;
  const modifications: TableModification<Uint8Array, Uint8Array>[] = [];
  // The head's condition covers the leaves: every edit of the document writes the head.
  if (parent !== null) modifications.push({ type: 'remove', key: parent.key });
  modifications.push({ type: 'put', key: leafKey(leaf.deleted, pos, hash), value: encodeLeafValue(leaf.ancestors, req.body) });
  modifications.push({ type: 'put', key: HEAD_KEY, value: encodeHead({ winner, leafCount, body }), version: state.head ?? Version.NOT_EXISTS });
  return { modifications, headIndex: modifications.length - 1, rev: formatRev(pos, hash), winner, created: state.head === null };
}

/**
 * The winner once `parent` (if any) is replaced by `leaf`, and its body for the head: the new leaf's,
 * the runner-up's, or — the winner unchanged — the body the head keeps (null when it keeps none).
 */
function winnerAfter(state: DocumentState, parent: StoredLeaf | null, leaf: Branch & { body: string }, runnerUp: StoredLeaf | null): { winner: LeafName; body: string | null } {
  const promoted = sameLeaf(parent, state.winner);
  const other = promoted ? runnerUp : state.winner;
  if (other === null || compareBranches({ ...other, ancestors: [] }, leaf) <= 0) return { winner: nameOf(leaf), body: leaf.body };
  return { winner: nameOf(other), body: promoted ? runnerUp!.body : state.winnerBody };
}

function nameOf(b: LeafName): LeafName {
  return { deleted: b.deleted, pos: b.pos, hash: b.hash };
}
