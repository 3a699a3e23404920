/**
 * CouchDB's `open_revs`: given leaves of a document by rev (or all of them), with their bodies — what
 * a replicator fetches after `_revs_diff`. A rev that is a leaf is a point read of its two possible
 * keys (live and deleted), all revs asked for in one read; with `latest`, a rev that is no longer a
 * leaf (the document moved on since the replicator's changes read) stands for the leaves whose paths
 * hold it, which takes reading every leaf.
 */
import { BytesTable, leafOf, readLeaves, StoredLeaf } from './document-reads';
import { documentOf } from './document-view';
import { documentFamily, leafKey } from './key-layout';
import type { RevId } from './rev-id';
import { hasRev, revOf } from './rev-tree';
import type { OpenRev, OpenRevsOptions } from './types';

/** Every leaf of document `id`, live and deleted, the winner first. */
export async function openAllRevs(table: BytesTable, id: string, options: Required<OpenRevsOptions>): Promise<OpenRev[]> {
  const { leaves } = await readLeaves(table, documentFamily(id));
  return leaves.reverse().map((leaf) => ({ ok: view(id, leaf, options) }));
}

/** The leaves `revs` of document `id` (each once, in the order asked), or `{ missing }` for each rev that is not one. */
export async function openRevs(table: BytesTable, id: string, revs: readonly (RevId & { text: string })[], options: Required<OpenRevsOptions>): Promise<OpenRev[]> {
  const family = documentFamily(id);
  const entries =
    revs.length === 0
      ? []
      : await table.getAll(
          family,
          revs.flatMap((r) => [leafKey(false, r.pos, r.hash), leafKey(true, r.pos, r.hash)]),
        );
  const found = revs.map((_, i) => entries[2 * i] ?? entries[2 * i + 1]);
  const all = options.latest && found.includes(null) ? (await readLeaves(table, family)).leaves : [];
  const out: OpenRev[] = [];
  const seen = new Set<string>();
  const add = (leaf: StoredLeaf) => {
    const rev = revOf(leaf);
    if (seen.has(rev)) return;
    seen.add(rev);
    out.push({ ok: view(id, leaf, options) });
  };
  revs.forEach((r, i) => {
    const entry = found[i];
    if (entry !== null) return add(leafOf(entry));
    const later = all.filter((leaf) => hasRev(leaf, r.pos, r.hash));
    if (later.length === 0) out.push({ missing: r.text });
    else later.reverse().forEach(add);
  });
  return out;
}

function view(id: string, leaf: StoredLeaf, options: Required<OpenRevsOptions>) {
  return documentOf(id, leaf, { names: [], conflicts: false, deletedConflicts: false, revs: options.revs });
}
