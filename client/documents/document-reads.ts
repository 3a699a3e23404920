/**
 * Reads of one document's family: the live winner (one point read of the head, which keeps the
 * winner's body; else one reverse iterator page of one key), the head and the leaf an edit extends
 * (one point read), the runner-up, one leaf by rev, and every leaf.
 */
import type { KeyValueTable } from '../key-value-table';
import type { TableEntry } from '../types';
import type { Version } from '../version';
import { decodeHead, HeadValue } from './head-codec';
import { HEAD_KEY, LEAF_PREFIX, LeafName, leafKey, parseLeafKey } from './key-layout';
import { decodeLeafValue } from './leaf-codec';
import type { Branch } from './rev-tree';

/** The table a document store keeps: bytes keys and values. */
export type BytesTable = KeyValueTable<Uint8Array, Uint8Array>;

/** A leaf entry as read: the branch, its body (canonical JSON), its key and version. */
export interface StoredLeaf extends Branch {
  body: string;
  key: Uint8Array;
  version: Version;
}

/** What an edit reads of a document: its head and the leaf it extends, by one point read. */
export interface DocumentState {
  /** The head's version (the document's last change); null for a document never written. */
  head: Version | null;
  /** The winning leaf and the number of leaves, as the head records them (null / 0 without a head). */
  winner: LeafName | null;
  leafCount: number;
  /** The winner's body as the head keeps it (null: not kept, or no head). */
  winnerBody: string | null;
  /** The leaf of the rev asked for, live or deleted, if it is one. */
  target: StoredLeaf | null;
}

/** All of a document's leaves, in key order (the winner last), with its head's version. */
export interface DocumentLeaves {
  head: Version | null;
  leaves: StoredLeaf[];
}

/** The leaf of an entry. */
export function leafOf(entry: TableEntry<Uint8Array, Uint8Array>): StoredLeaf {
  const name = parseLeafKey(entry.key);
  const value = decodeLeafValue(entry.value);
  return { ...name, ancestors: value.ancestors, body: value.body, key: entry.key, version: entry.version };
}

function isHead(key: Uint8Array): boolean {
  return key.length === 1 && key[0] === HEAD_KEY[0];
}

/** The first page of an iteration (an empty list when there is none). */
async function firstPage<T>(pages: AsyncIterable<{ items: T[] }>): Promise<T[]> {
  for await (const page of pages) return page.items;
  return [];
}

/** A leaf's name, path and body: what a document read shows. */
export type LeafWithBody = Branch & { body: string };

/**
 * The live winner of a document (null when it is missing or deleted): one point read of its head,
 * which keeps the winner's body; a head that keeps none (format 1: an old head, or a body too large
 * to repeat) sends the read to the winning leaf. The path it returns is empty: read the leaf for it.
 */
export async function readLiveWinner(table: BytesTable, family: string): Promise<LeafWithBody | null> {
  const entry = await table.get(family, HEAD_KEY);
  if (entry === null) return null;
  const { winner, body } = decodeHead(entry.value);
  if (winner.deleted) return null;
  if (body !== null) return { ...winner, ancestors: [], body };
  const leaf = await readWinner(table, family);
  return leaf === null || leaf.deleted ? null : leaf;
}

/** The winning leaf: the last key of the leaf range, one reverse page of one key. */
export async function readWinner(table: BytesTable, family: string): Promise<StoredLeaf | null> {
  const items = await firstPage(table.entryIterator(family, { reverse: true, maxKeysAtOnce: 1, prefix: LEAF_PREFIX }));
  return items.length === 0 ? null : leafOf(items[0]);
}

/** The head of a document and, for `rev`, its leaf (live or deleted): one point read of at most three keys. */
export async function readState(table: BytesTable, family: string, rev: { pos: number; hash: string } | null): Promise<DocumentState> {
  const [head, live, deleted] = await table.getAll(family, rev === null ? [HEAD_KEY] : [HEAD_KEY, leafKey(false, rev.pos, rev.hash), leafKey(true, rev.pos, rev.hash)]);
  const value = head ? decodeHead(head.value) : null;
  const target = live ?? deleted;
  return { head: head?.version ?? null, winner: value?.winner ?? null, leafCount: value?.leafCount ?? 0, winnerBody: value?.body ?? null, target: target ? leafOf(target) : null };
}

/** The second-best leaf (the winner if the winner is deleted): the leaf range's last two entries. */
export async function readRunnerUp(table: BytesTable, family: string): Promise<StoredLeaf | null> {
  const entries = await firstPage(table.entryIterator(family, { reverse: true, maxKeysAtOnce: 2, prefix: LEAF_PREFIX }));
  return entries.length < 2 ? null : leafOf(entries[1]);
}

/** The leaf a name names (null if it is gone). */
export async function readLeafNamed(table: BytesTable, family: string, name: LeafName): Promise<StoredLeaf | null> {
  const entry = await table.get(family, leafKey(name.deleted, name.pos, name.hash));
  return entry ? leafOf(entry) : null;
}

/** The heads of documents (one point read each; the client merges them into multi-gets). */
export async function readHeads(table: BytesTable, families: readonly string[]): Promise<({ version: Version; value: HeadValue } | null)[]> {
  const entries = await Promise.all(families.map((f) => table.get(f, HEAD_KEY)));
  return entries.map((e) => (e ? { version: e.version, value: decodeHead(e.value) } : null));
}

/** The leaf of rev (pos, hash), deleted or not, or null when it is not a leaf. */
export async function readLeaf(table: BytesTable, family: string, pos: number, hash: string): Promise<StoredLeaf | null> {
  const [live, deleted] = await table.getAll(family, [leafKey(false, pos, hash), leafKey(true, pos, hash)]);
  const entry = live ?? deleted;
  return entry ? leafOf(entry) : null;
}

/** Every leaf of a document (the winner last) and its head's version. */
export async function readLeaves(table: BytesTable, family: string): Promise<DocumentLeaves> {
  const leaves: StoredLeaf[] = [];
  let head: Version | null = null;
  for await (const page of table.entryIterator(family, { maxKeysAtOnce: 64 })) {
    for (const entry of page.items) {
      if (isHead(entry.key)) head = entry.version;
      else leaves.push(leafOf(entry));
    }
  }
  return { head, leaves };
}

/** The names of every leaf (no bodies), in key order: the winner last. */
export async function readLeafNames(table: BytesTable, family: string): Promise<Branch[]> {
  const names: Branch[] = [];
  for await (const page of table.keyIterator(family, { prefix: LEAF_PREFIX, maxKeysAtOnce: 256 })) {
    for (const k of page.items) names.push({ ...parseLeafKey(k.key), ancestors: [] });
  }
  return names;
}
