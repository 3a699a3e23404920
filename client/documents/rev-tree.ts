/**
 * A document's revision tree as its leaves (edit branches), each with the path of ancestor hashes it
 * keeps: the model of CouchDB on FoundationDB (seed 001), where every branch is one entry and the
 * tree is never assembled. Pure functions: the winner, whether a rev is known, and how a replicated
 * path merges in (CouchDB's `couch_key_tree:merge` restated for branches).
 */
import { formatRev } from './rev-id';

/** One edit branch: its leaf and the ancestors it keeps, newest (the parent) first. */
export interface Branch {
  pos: number;
  hash: string;
  deleted: boolean;
  ancestors: readonly string[];
}

/** A replicated revision path: the leaf at `pos`, then its ancestors, newest first (`ids[0]` is the leaf). */
export interface RevisionPath {
  pos: number;
  ids: readonly string[];
  deleted: boolean;
}

/** How a path merges into a tree. */
export interface PathMerge<T extends Branch> {
  /** The path's leaf is already a node of the tree: nothing to do. */
  known: boolean;
  /** Branches whose leaf is on the path: the path extends them, so they stop being leaves. */
  extended: T[];
  /** The new leaf's ancestors: the path's, continued by the tree's below it, stemmed to revsLimit − 1. */
  ancestors: string[];
}

/**
 * Orders branches as CouchDB picks its winner: a live leaf beats a deleted one, then the higher pos,
 * then the greater hash (bytewise; hashes are ASCII). The winner sorts last, as the keys do.
 */
export function compareBranches(a: Branch, b: Branch): number {
  if (a.deleted !== b.deleted) return a.deleted ? -1 : 1;
  if (a.pos !== b.pos) return a.pos - b.pos;
  return a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0;
}

/** The winning branch, or null for none. */
export function winnerOf<T extends Branch>(branches: readonly T[]): T | null {
  let best: T | null = null;
  for (const b of branches) if (best === null || compareBranches(b, best) > 0) best = b;
  return best;
}

/** True when the rev (pos, hash) is the branch's leaf or one of the ancestors it keeps. */
export function hasRev(b: Branch, pos: number, hash: string): boolean {
  const j = b.pos - pos;
  if (j === 0) return b.hash === hash;
  return j > 0 && j <= b.ancestors.length && b.ancestors[j - 1] === hash;
}

/** The leaf's rev id. */
export function revOf(b: Branch): string {
  return formatRev(b.pos, b.hash);
}

/** CouchDB's `_revisions` of a branch. */
export function revisionsOf(b: Branch): { start: number; ids: string[] } {
  return { start: b.pos, ids: [b.hash, ...b.ancestors] };
}

/** The ancestors of a new leaf whose parent is `parent`, stemmed to `revsLimit` positions counting the leaf. */
export function childAncestors(parent: Branch, revsLimit: number): string[] {
  return [parent.hash, ...parent.ancestors.slice(0, Math.max(0, revsLimit - 2))].slice(0, revsLimit - 1);
}

/**
 * Merges a replicated path into the tree of `branches`: known when its leaf is a node already; else
 * it extends every branch whose leaf lies on it (those leaves become internal nodes), and otherwise
 * starts a branch of its own (a conflict). The new leaf keeps the path's ancestors, continued below
 * the path's oldest rev by whichever branch shares that rev and keeps more, then stemmed.
 */
export function mergePath<T extends Branch>(branches: readonly T[], path: RevisionPath, revsLimit: number): PathMerge<T> {
  const { pos, ids } = path;
  if (branches.some((b) => hasRev(b, pos, ids[0]))) return { known: true, extended: [], ancestors: [] };
  const low = pos - ids.length + 1;
  const extended = branches.filter((b) => b.pos < pos && b.pos >= low && ids[pos - b.pos] === b.hash);
  const ancestors = ids.slice(1);
  let below: readonly string[] = [];
  for (const b of branches) {
    if (!hasRev(b, low, ids[ids.length - 1])) continue;
    const rest = b.ancestors.slice(b.pos - low);
    if (rest.length > below.length) below = rest;
  }
  for (let i = 0; i < below.length && ancestors.length < revsLimit - 1; i++) ancestors.push(below[i]);
  return { known: false, extended, ancestors: ancestors.slice(0, revsLimit - 1) };
}
