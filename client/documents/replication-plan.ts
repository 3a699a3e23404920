/**
 * The plan of a replication write of one document (`bulkDocs` with `newEdits: false`): merge each
 * path sent into the document's leaves (rev-tree.ts), then write the leaves that changed and move
 * the head, conditioned on the versions read. A known rev changes nothing; a path through a leaf
 * extends it; any other path adds a branch (a conflict the winner rule settles).
 */
import { InvalidArgumentError } from '../errors';
import { MAX_BATCH_BYTES, MAX_BATCH_ITEMS } from '../limits';
import type { TableModification } from '../types';
import { Version } from '../version';
import { checkLeafSize } from './document-input';
import type { StoredLeaf } from './document-reads';
import { encodeHead } from './head-codec';
import { HEAD_KEY, LeafName, leafKey } from './key-layout';
import { encodeLeafValue } from './leaf-codec';
import { Branch, mergePath, RevisionPath, winnerOf } from './rev-tree';

/** One replicated revision: its path and body (canonical JSON). */
export interface ReplicatedEdit {
  path: RevisionPath;
  body: string;
}

/** What a replication write of one document writes. */
export interface ReplicationPlan {
  modifications: TableModification<Uint8Array, Uint8Array>[];
  headIndex: number;
  winner: LeafName;
  /** The write creates the document (it had no head). */
  created: boolean;
}

/** A leaf the merge adds. */
type NewLeaf = Branch & { body: string; version?: undefined };

/** Room left in a batch for the family sent with each modification and the framing. */
const BATCH_FRAMING_BYTES = 64;

/**
 * Merges `edits` into the leaves read (`head`: the head's version) and plans the update, or null when
 * every rev is known.
 * @throws InvalidArgumentError when a new leaf exceeds one value or the update one batch.
 */
export function planReplication(id: string, family: string, head: Version | null, leaves: readonly StoredLeaf[], edits: readonly ReplicatedEdit[], revsLimit: number): ReplicationPlan | null {
  let state: (StoredLeaf | NewLeaf)[] = [...leaves];
  for (const edit of edits) {
    const merge = mergePath(state, edit.path, revsLimit);
    if (merge.known) continue;
    const extended = new Set<Branch>(merge.extended);
    state = state.filter((b) => !extended.has(b));
    state.push({ pos: edit.path.pos, hash: edit.path.ids[0], deleted: edit.path.deleted, ancestors: merge.ancestors, body: edit.body });
  }
  const added = state.filter((b): b is NewLeaf => b.version === undefined);
  if (added.length === 0) return null;
  const kept = new Set(state);
  const modifications: TableModification<Uint8Array, Uint8Array>[] = [];
  // The head's condition covers the leaves: every edit of the document writes the head.
  for (const leaf of leaves) if (!kept.has(leaf)) modifications.push({ type: 'remove', key: leaf.key });
  for (const leaf of added) {
    checkLeafSize(id, leaf.ancestors, leaf.body);
    modifications.push({ type: 'put', key: leafKey(leaf.deleted, leaf.pos, leaf.hash), value: encodeLeafValue(leaf.ancestors, leaf.body) });
  }
  const best = winnerOf(state)!;
  const winner: LeafName = { deleted: best.deleted, pos: best.pos, hash: best.hash };
  const version = head ?? Version.NOT_EXISTS;
  modifications.push({ type: 'put', key: HEAD_KEY, value: encodeHead({ winner, leafCount: state.length, body: best.body }), version });
  if (batchBytes(family, modifications) > MAX_BATCH_BYTES) {
    // The winner's body repeated in the head is an optimisation of reads: left out before it fails a batch.
    modifications[modifications.length - 1] = { type: 'put', key: HEAD_KEY, value: encodeHead({ winner, leafCount: state.length, body: null }), version };
  }
  checkBatch(id, family, modifications);
  return { modifications, headIndex: modifications.length - 1, winner, created: head === null };
}

/** The bytes a batch of modifications of `family` counts against MAX_BATCH_BYTES (as the client counts them, with room for framing). */
function batchBytes(family: string, mods: TableModification<Uint8Array, Uint8Array>[]): number {
  const familyBytes = Buffer.byteLength(family, 'utf8');
  let bytes = 0;
  for (const m of mods) bytes += familyBytes + BATCH_FRAMING_BYTES + (m.type === 'removeRange' ? 0 : m.key.length) + (m.type === 'put' ? m.value.length : 0);
  return bytes;
}

function checkBatch(id: string, family: string, mods: TableModification<Uint8Array, Uint8Array>[]): void {
  if (mods.length > MAX_BATCH_ITEMS) {
    throw new InvalidArgumentError(`bulkDocs changes ${mods.length - 1} leaves of document "${id}" at once; the maximum is ${MAX_BATCH_ITEMS - 1} (MAX_BATCH_ITEMS less the head)`);
  }
  const bytes = batchBytes(family, mods);
  if (bytes > MAX_BATCH_BYTES) throw new InvalidArgumentError(`bulkDocs writes ${bytes} bytes of document "${id}" at once; the maximum is ${MAX_BATCH_BYTES} (MAX_BATCH_BYTES)`);
}
