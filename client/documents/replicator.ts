/**
 * Replication writes (`bulkDocs` with `newEdits: false`) and `revsDiff`. A bulk is checked whole,
 * then read and planned whole — every document's merge and limits — before its first commit, so bad
 * input writes nothing. Each document is then one atomic update of its family (documents of a bulk
 * are independent, as in CouchDB), retried from a fresh read when a concurrent edit moved its head:
 * merges commute, so a replicated rev is never refused. Markers and indexing go per partition, one
 * update for the bulk's documents of that partition.
 */
import { ConditionalTableUpdateError, DocumentConflictError } from '../errors';
import type { Version } from '../version';
import { BytesTable, readHeads, readLeaves } from './document-reads';
import { layoutError } from './document-writer';
import { CommittedChange, FeedIndex, Marker } from './feed-index';
import type { FeedLayout } from './feed-layout';
import { documentFamily } from './key-layout';
import { formatRev } from './rev-id';
import { planReplication, ReplicatedEdit, ReplicationPlan } from './replication-plan';
import { hasRev } from './rev-tree';
import type { RevsDiffEntry } from './types';

/** Commits of one document before giving up (each failure: a concurrent edit committed first). */
const MAX_REPLICATION_ATTEMPTS = 32;
/** Documents read at once by revsDiff. */
const READ_CONCURRENCY = 64;

/** The bulk's documents of one partition, prepared. */
interface PartitionBatch {
  feedFamily: string;
  ids: string[];
  markers: Marker[];
  plans: (ReplicationPlan | null)[];
}

/** Runs replication writes and revsDiff. */
export class Replicator {
  constructor(
    private readonly table: BytesTable,
    private readonly layout: FeedLayout,
    private readonly feed: FeedIndex,
    private readonly revsLimit: number,
  ) {}

  /** Writes the replicated revisions of each document (`edits`: by id, in input order). */
  async write(edits: ReadonlyMap<string, ReplicatedEdit[]>): Promise<void> {
    const byFeed = new Map<string, string[]>();
    for (const id of edits.keys()) {
      const f = this.layout.feedOf(id);
      const ids = byFeed.get(f);
      if (ids === undefined) byFeed.set(f, [id]);
      else ids.push(id);
    }
    const settled = await Promise.allSettled([...byFeed].map(([feedFamily, ids]) => this.prepare(feedFamily, ids, edits)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) {
      await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? this.feed.unmark(s.value.markers) : undefined)));
      throw failed.reason;
    }
    await Promise.all(settled.map((s) => this.commit((s as PromiseFulfilledResult<PartitionBatch>).value, edits)));
  }

  /** Marks, reads and plans the bulk's documents of one partition. */
  private async prepare(feedFamily: string, ids: string[], edits: ReadonlyMap<string, ReplicatedEdit[]>): Promise<PartitionBatch> {
    const [marked, plans] = await Promise.allSettled([this.feed.mark(feedFamily, ids), this.planAll(ids, edits)]);
    if (marked.status === 'rejected' || plans.status === 'rejected') {
      if (marked.status === 'fulfilled') await this.feed.unmark(marked.value);
      throw [marked, plans].find((s) => s.status === 'rejected')!.reason;
    }
    return { feedFamily, ids, markers: marked.value, plans: plans.value };
  }

  /** Plans the documents: a point read of each head, and the leaves of those that exist. */
  private async planAll(ids: string[], edits: ReadonlyMap<string, ReplicatedEdit[]>): Promise<(ReplicationPlan | null)[]> {
    const heads = await readHeads(
      this.table,
      ids.map((id) => documentFamily(id)),
    );
    return Promise.all(ids.map((id, i) => (heads[i] === null ? planReplication(id, documentFamily(id), null, [], edits.get(id)!, this.revsLimit) : this.plan(id, edits.get(id)!))));
  }

  private async plan(id: string, edits: ReplicatedEdit[]): Promise<ReplicationPlan | null> {
    const family = documentFamily(id);
    const { head, leaves } = await readLeaves(this.table, family);
    return planReplication(id, family, head, leaves, edits, this.revsLimit);
  }

  /** Commits the partition's documents; their indexing (one update) follows. */
  private async commit(batch: PartitionBatch, edits: ReadonlyMap<string, ReplicatedEdit[]>): Promise<void> {
    const { feedFamily, ids, markers } = batch;
    const commits = await Promise.all(ids.map((id, i) => this.commitOne(id, batch.plans[i], edits.get(id)!)));
    const changes: CommittedChange[] = [];
    const idle: Marker[] = [];
    commits.forEach((c, i) => {
      if (c === null) idle.push(markers[i]);
      else
        changes.push({
          id: ids[i],
          commit: c.version,
          rev: formatRev(c.plan.winner.pos, c.plan.winner.hash),
          deleted: c.plan.winner.deleted,
          time: c.time,
          known: null,
          marker: markers[i],
          created: c.plan.created,
        });
    });
    for (const ch of changes) if (ch.commit.segmentId !== ch.marker!.version.segmentId) throw layoutError(this.layout, ch.id, ch.commit.segmentId, ch.marker!.version.segmentId);
    this.feed.indexAllLater(feedFamily, changes, idle);
  }

  private async commitOne(id: string, plan: ReplicationPlan | null, edits: ReplicatedEdit[]): Promise<{ plan: ReplicationPlan; version: Version; time: number } | null> {
    for (let attempt = 1; plan !== null; attempt++) {
      try {
        const versions = await this.table.update(documentFamily(id), plan.modifications);
        return { plan, version: versions[plan.headIndex]!, time: this.feed.changeTime() };
      } catch (err) {
        if (!(err instanceof ConditionalTableUpdateError)) throw err;
        if (attempt >= MAX_REPLICATION_ATTEMPTS)
          throw new DocumentConflictError(`document "${id}" changed under each of ${MAX_REPLICATION_ATTEMPTS} attempts to merge replicated revisions`, { key: id, cause: err });
      }
      plan = await this.plan(id, edits);
    }
    return null;
  }

  /**
   * CouchDB's `_revs_diff`: for each document, the revs it does not know (documents missing none are
   * left out). A point read of each head first: a document never written misses every rev, and only
   * the leaves of those that exist are read.
   */
  async revsDiff(revs: ReadonlyMap<string, { text: string; pos: number; hash: string }[]>): Promise<Record<string, RevsDiffEntry>> {
    const ids = [...revs.keys()];
    const out: Record<string, RevsDiffEntry> = {};
    const heads = await readHeads(
      this.table,
      ids.map((id) => documentFamily(id)),
    );
    const existing = ids.filter((id, i) => {
      if (heads[i] !== null) return true;
      const missing = [...new Set(revs.get(id)!.map((r) => r.text))];
      if (missing.length > 0) out[id] = { missing };
      return false;
    });
    for (let i = 0; i < existing.length; i += READ_CONCURRENCY) {
      const slice = existing.slice(i, i + READ_CONCURRENCY);
      const read = await Promise.all(slice.map((id) => readLeaves(this.table, documentFamily(id))));
      slice.forEach((id, j) => {
        const { leaves } = read[j];
        const missing = revs.get(id)!.filter((r) => !leaves.some((b) => hasRev(b, r.pos, r.hash)));
        if (missing.length === 0) return;
        const entry: RevsDiffEntry = { missing: [...new Set(missing.map((r) => r.text))] };
        const highest = Math.max(...missing.map((r) => r.pos));
        const ancestors = leaves.filter((b) => b.pos < highest).map((b) => formatRev(b.pos, b.hash));
        if (ancestors.length > 0) entry.possible_ancestors = ancestors;
        out[id] = entry;
      });
    }
    return Object.fromEntries(ids.filter((id) => out[id] !== undefined).map((id) => [id, out[id]]));
  }
}
