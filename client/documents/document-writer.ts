/**
 * Interactive edits (put / remove): mark, read, commit, index (feed-index.ts explains the steps).
 * The marker is written while the document's state (the head and the leaf the edit extends: one
 * point read) is read; the commit is one atomic update of the document's family
 * conditioned on the head's version, so of two editors at one rev exactly one commits. A commit that
 * fails its condition is planned again from a fresh read — the edit then either still applies
 * (another branch moved) or is a DocumentConflictError (its rev is gone). The edit resolves once
 * committed; its indexing follows (a changes read indexes whatever is still marked, so no read can
 * miss it).
 */
import { ConditionalTableUpdateError, DocumentConflictError, InvalidArgumentError } from '../errors';
import type { Version } from '../version';
import { BytesTable, DocumentState, readLeafNamed, readRunnerUp, readState, StoredLeaf } from './document-reads';
import { EditPlan, editParent, EditRequest, needsRunnerUp, planEdit } from './edit-plan';
import { FeedIndex, Marker } from './feed-index';
import type { FeedLayout } from './feed-layout';
import { documentFamily } from './key-layout';
import { formatRev } from './rev-id';
import type { DocumentWriteResult } from './types';

/** Commits of one edit before it reports a conflict (each failure: another edit of the document committed first). */
const MAX_EDIT_ATTEMPTS = 32;

/** Whether the edit surely wrote nothing: then its marker can go. */
function surelyNotApplied(err: unknown): boolean {
  return err instanceof DocumentConflictError || err instanceof InvalidArgumentError || err instanceof ConditionalTableUpdateError;
}

/** The error of a store whose partition count is not the table's. */
export function layoutError(layout: FeedLayout, id: string, documentSegment: string, feedSegment: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `partitionCount ${layout.partitionCount} does not match the table: document "${id}" is in segment ${documentSegment}, the feed family computed for it in segment ${feedSegment}`,
    { key: id },
  );
}

/** Runs interactive edits. */
export class DocumentWriter {
  constructor(
    private readonly table: BytesTable,
    private readonly layout: FeedLayout,
    private readonly feed: FeedIndex,
    private readonly revsLimit: number,
  ) {}

  /** Applies one edit. @throws DocumentConflictError by the rules of edit-plan.ts. */
  async edit(req: EditRequest): Promise<DocumentWriteResult> {
    const family = documentFamily(req.id);
    const feedFamily = this.layout.feedOf(req.id);
    const [marked, state] = await Promise.allSettled([this.feed.markOne(feedFamily, req.id), readState(this.table, family, req.rev)]);
    const marker = marked.status === 'fulfilled' ? marked.value : null;
    if (marker === null || state.status === 'rejected') {
      if (marker !== null) await this.feed.unmark([marker]);
      throw [marked, state].find((s) => s.status === 'rejected')!.reason;
    }
    let committed: { plan: EditPlan; version: Version };
    try {
      committed = await this.commit(req, family, state.value, marker);
    } catch (err) {
      // An update whose outcome is unknown keeps its marker, so that a changes read indexes it if it applied.
      if (surelyNotApplied(err)) await this.feed.unmark([marker]);
      throw err;
    }
    const { plan, version } = committed;
    const time = this.feed.changeTime();
    if (version.segmentId !== marker.version.segmentId) throw layoutError(this.layout, req.id, version.segmentId, marker.version.segmentId);
    // Indexing is bookkeeping of the feed, which the marker already guarantees: the edit resolves
    // once committed, and its indexing goes on (the store's close() waits for it).
    this.feed.indexLater(feedFamily, {
      id: req.id,
      commit: version,
      rev: formatRev(plan.winner.pos, plan.winner.hash),
      deleted: plan.winner.deleted,
      time,
      known: null,
      marker,
      created: plan.created,
    });
    return { id: req.id, rev: plan.rev };
  }

  private async commit(req: EditRequest, family: string, state: DocumentState, marker: Marker): Promise<{ plan: EditPlan; version: Version }> {
    for (let attempt = 1; ; attempt++) {
      if (state.head !== null && state.head.segmentId !== marker.version.segmentId) throw layoutError(this.layout, req.id, state.head.segmentId, marker.version.segmentId);
      const plan = await this.plan(req, family, state);
      let cause: unknown = null;
      try {
        if (plan !== null) {
          const versions = await this.table.update(family, plan.modifications);
          return { plan, version: versions[plan.headIndex]! };
        }
      } catch (err) {
        if (!(err instanceof ConditionalTableUpdateError)) throw err;
        cause = err;
      }
      if (attempt >= MAX_EDIT_ATTEMPTS) throw new DocumentConflictError(`document "${req.id}" changed under each of ${MAX_EDIT_ATTEMPTS} attempts of this edit`, { key: req.id, cause });
      state = await readState(this.table, family, req.rev);
    }
  }

  /** Plans the edit, reading the deleted winner it re-creates or the runner-up it promotes when it needs one. */
  private async plan(req: EditRequest, family: string, state: DocumentState): Promise<EditPlan | null> {
    const parent = editParent(req, state);
    let leaf: StoredLeaf | null = null;
    if (parent.kind === 'extend') leaf = parent.leaf;
    else if (parent.kind === 'recreate') {
      leaf = await readLeafNamed(this.table, family, parent.winner);
      // Gone since the head was read: another edit committed; read again.
      if (leaf === null) return null;
    }
    const runnerUp = needsRunnerUp(req, state, leaf) ? await readRunnerUp(this.table, family) : null;
    return planEdit(req, state, leaf, runnerUp, this.revsLimit);
  }
}
