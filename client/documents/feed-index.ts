/**
 * Keeps a partition's feed family in step with its documents. A document's change and its feed entry
 * live in different key families, and an atomic update covers one family only, so an edit goes:
 *
 * 1. mark: a marker `0x03·token·id` in the feed family says an edit of the document is under way;
 * 2. commit: the document's own atomic update (its head's new version is the change's seq);
 * 3. index: one atomic update of the feed family, conditioned on the document's id entry — move the
 *    id entry to the new seq, replace the old change entry by the new one, drop the marker. Skipped
 *    when the id entry already holds a later seq (another edit indexed after this one).
 *
 * A writer that dies between 2 and 3 leaves its marker; a changes read indexes every marked document
 * from its head before it lists anything (repair), so no committed change is ever missed, and it
 * removes markers older than the lease. The id entry's condition keeps one change entry per document.
 * An index update also carries what it changes of the family's document counts (feed-counts.ts).
 */
import { randomBytes } from 'node:crypto';
import { ConditionalTableUpdateError } from '../errors';
import { MAX_BATCH_ITEMS } from '../limits';
import type { TableModification } from '../types';
import { Version } from '../version';
import { ChangeClock } from './change-clock';
import { BytesTable, readHeads } from './document-reads';
import { GroupCommitter } from './group-committer';
import { addCounts, countChange, decodeIdEntry, deltaModification, DocumentCounts, encodeIdEntry, FeedCounts, FOLD_AT, ignoreConditional, IdState } from './feed-counts';
import { ChangeRecord, decodeUint64, encodeChange, encodeUint64 } from './feed-records';
import { changeKey, CLOCK_KEY, documentFamily, idKey, idOfMarkerKey, MARKER_PREFIX, markerKey, MARKER_TOKEN_BYTES } from './key-layout';
import { formatRev } from './rev-id';

/** A marker written by an edit. */
export interface Marker {
  family: string;
  key: Buffer;
  version: Version;
}

/** A document's id entry (its seq and counted state, feed-counts.ts) and the entry's version. */
export interface IdEntry extends IdState {
  version: Version;
}

/** A change to index: the document's head version after its commit and its winner then. */
export interface CommittedChange {
  id: string;
  commit: Version;
  rev: string;
  deleted: boolean;
  /** When it committed, in µs ({@link FeedIndex.changeTime}). */
  time: number;
  known: IdEntry | null;
  marker: Marker | null;
  /**
   * The commit created the document (its head did not exist), so no id entry of it can predate the
   * commit: indexing takes `known` as null without reading it. (Should a later change of the document
   * be indexed first, the condition fails and the id entry is read then.)
   */
  created?: boolean;
}

/** Attempts of one index update before it gives up (each failure means another edit moved the id entry). */
const MAX_INDEX_ATTEMPTS = 64;
/** Modifications of one document in an index update (and one per update: its count delta). */
const MODS_PER_CHANGE = 4;
/** Count deltas a FeedIndex writes to one feed family between two folds it starts (feed-counts.ts). */
export const FOLD_EVERY = FOLD_AT * 4;
/** Documents repaired at once by a changes read. */
const REPAIR_CONCURRENCY = 32;
/** Marker tokens drawn from the system's random source at once (one draw per this many markers). */
const TOKENS_PER_DRAW = 256;

const EMPTY = Buffer.alloc(0);
const ZERO_COUNTS: DocumentCounts = { documents: 0, deletedDocuments: 0 };

/** The group committers of one feed family. */
interface FamilyGroups {
  index: GroupCommitter<CommittedChange, void>;
}

/** The feed families' markers, id entries and change entries. */
export class FeedIndex {
  private readonly changeClock: ChangeClock;
  /** Per feed family, the group committer of single edits' index updates. */
  private readonly groups = new Map<string, FamilyGroups>();
  /** Indexing under way after its edits resolved. */
  private readonly background = new Set<Promise<void>>();
  /** Per feed family, the single edits' markers asked for in this turn, written together at its end. */
  private readonly pendingMarks = new Map<string, { id: string; resolve: (m: Marker) => void; reject: (e: unknown) => void }[]>();
  /** Random bytes for marker tokens, and how far they are used (a draw per token costs more than the rest of a marker). */
  private tokens = Buffer.alloc(0);
  private tokenAt = 0;
  /** The feed families' document counts. */
  readonly counts: FeedCounts;
  /** Per feed family, the count deltas written since this index last started a fold of it. */
  private readonly deltasWritten = new Map<string, number>();

  constructor(
    private readonly table: BytesTable,
    private readonly clock: () => number,
  ) {
    this.changeClock = new ChangeClock(clock);
    this.counts = new FeedCounts(table);
  }

  private groupsOf(family: string): FamilyGroups {
    let g = this.groups.get(family);
    if (g === undefined) {
      g = {
        index: new GroupCommitter<CommittedChange, void>(async (changes) => {
          await this.readAndIndex(family, changes);
          return new Array<void>(changes.length);
        }),
      };
      this.groups.set(family, g);
    }
    return g;
  }

  /** The time of a change committing now: the order in which the feed merges its partitions. */
  changeTime(): number {
    return this.changeClock.now();
  }

  /**
   * Marks an edit of document `id` (of feed family `family`) as under way. The markers asked for in
   * one turn of the event loop's microtasks go in one write (edits resumed by one answer start
   * together); a write never waits for another's to end: the marker is on the edit's path.
   */
  markOne(family: string, id: string): Promise<Marker> {
    return new Promise<Marker>((resolve, reject) => {
      let queue = this.pendingMarks.get(family);
      if (queue === undefined) {
        this.pendingMarks.set(family, (queue = []));
        queueMicrotask(() => this.writeMarks(family));
      }
      queue.push({ id, resolve, reject });
    });
  }

  private writeMarks(family: string): void {
    const queue = this.pendingMarks.get(family)!;
    this.pendingMarks.delete(family);
    this.mark(
      family,
      queue.map((q) => q.id),
    ).then(
      (markers) => queue.forEach((q, i) => q.resolve(markers[i])),
      (err: unknown) => queue.forEach((q) => q.reject(err)),
    );
  }

  /**
   * Indexes a committed change after the edit resolves, with the other edits' of its feed family
   * (its `known` is read then). Should that fail, its marker stays and a changes read indexes it.
   */
  indexLater(family: string, change: CommittedChange): void {
    this.defer(this.groupsOf(family).index.submit(change));
  }

  /** Indexes committed changes of one feed family after the bulk resolves, and removes the markers of its no-ops; see {@link indexLater}. */
  indexAllLater(family: string, changes: readonly CommittedChange[], idle: readonly Marker[]): void {
    this.defer(Promise.all([this.readAndIndex(family, changes), this.unmark(idle)]).then(() => undefined));
  }

  /** Reads the id entries of the changes' documents (but of those their commits created), then indexes them. */
  private async readAndIndex(family: string, changes: readonly CommittedChange[]): Promise<void> {
    const known = await this.readIds(
      family,
      changes.filter((c) => c.created !== true).map((c) => c.id),
    );
    let at = 0;
    await this.index(
      family,
      changes.map((c) => ({ ...c, known: c.created === true ? null : known[at++] })),
    );
  }

  /** Resolves once every indexing started so far has ended. */
  async drain(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  private defer(work: Promise<void>): void {
    // Failures are left to the markers (see above).
    const tracked = work.catch(() => undefined);
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  /** Marks edits of `ids` (documents of the feed family `family`) as under way. */
  async mark(family: string, ids: readonly string[]): Promise<Marker[]> {
    const stamp = encodeUint64(BigInt(Math.max(0, Math.floor(this.clock()))));
    const keys = ids.map((id) => markerKey(this.token(), id));
    const chunks = Array.from({ length: Math.ceil(keys.length / MAX_BATCH_ITEMS) }, (_, c) => keys.slice(c * MAX_BATCH_ITEMS, (c + 1) * MAX_BATCH_ITEMS));
    const versions = await Promise.all(
      chunks.map((slice) =>
        this.table.putAll(
          family,
          slice.map((k) => [k, stamp] as const),
        ),
      ),
    );
    return keys.map((key, i) => ({ family, key, version: versions[Math.floor(i / MAX_BATCH_ITEMS)][i % MAX_BATCH_ITEMS] }));
  }

  /** A fresh random marker token (a view of the current draw: markerKey copies it). */
  private token(): Buffer {
    if (this.tokenAt + MARKER_TOKEN_BYTES > this.tokens.length) [this.tokens, this.tokenAt] = [randomBytes(MARKER_TOKEN_BYTES * TOKENS_PER_DRAW), 0];
    const token = this.tokens.subarray(this.tokenAt, this.tokenAt + MARKER_TOKEN_BYTES);
    this.tokenAt += MARKER_TOKEN_BYTES;
    return token;
  }

  /** Removes markers of edits that ended without a commit (best effort: a lease ends them anyway). */
  async unmark(markers: readonly Marker[]): Promise<void> {
    await Promise.all(markers.map((m) => this.table.remove(m.family, m.key).catch(() => undefined)));
  }

  /** The id entries of `ids` in feed family `family`. */
  async readIds(family: string, ids: readonly string[]): Promise<(IdEntry | null)[]> {
    if (ids.length === 0) return [];
    const unique = [...new Set(ids)];
    const entries = await this.table.getAll(
      family,
      unique.map((id) => idKey(id)),
    );
    const byId = new Map(unique.map((id, i) => [id, entries[i]]));
    return ids.map((id) => {
      const e = byId.get(id);
      return e ? { ...decodeIdEntry(e.value), version: e.version } : null;
    });
  }

  /**
   * Indexes committed changes of documents of feed family `family`: in updates of many documents
   * when no other edit interferes, else one by one, re-reading the id entry after a failed condition.
   * Two changes of one document go in separate rounds (an update names a key once).
   */
  async index(family: string, changes: readonly CommittedChange[]): Promise<void> {
    for (const round of rounds(changes)) {
      const chunk = Math.floor((MAX_BATCH_ITEMS - 1) / MODS_PER_CHANGE);
      await Promise.all(
        Array.from({ length: Math.ceil(round.length / chunk) }, async (_, c) => {
          const slice = round.slice(c * chunk, (c + 1) * chunk);
          if (slice.length > 1) {
            try {
              const planned = slice.map((ch) => this.modificationsOf(ch));
              await this.writeIndex(
                family,
                planned.flatMap((p) => p.mods),
                planned.reduce((sum, p) => addCounts(sum, p.delta), ZERO_COUNTS),
              );
              return;
            } catch (err) {
              if (!(err instanceof ConditionalTableUpdateError)) throw err;
            }
          }
          await Promise.all(slice.map((ch) => this.indexAlone(family, ch)));
        }),
      );
    }
  }

  private async indexAlone(family: string, change: CommittedChange): Promise<void> {
    let known = change.known;
    for (let attempt = 0; attempt < MAX_INDEX_ATTEMPTS; attempt++) {
      try {
        const { mods, delta } = this.modificationsOf({ ...change, known });
        await this.writeIndex(family, mods, delta);
        return;
      } catch (err) {
        if (!(err instanceof ConditionalTableUpdateError)) throw err;
        [known] = await this.readIds(family, [change.id]);
      }
    }
    throw new ConditionalTableUpdateError('BAD_KEY_VERSION', `the changes feed entry of document "${change.id}" kept moving: ${MAX_INDEX_ATTEMPTS} attempts failed`);
  }

  /** Writes an index update with its count delta; starts a fold of the family's counts now and then. */
  private async writeIndex(family: string, mods: TableModification<Uint8Array, Uint8Array>[], delta: DocumentCounts): Promise<void> {
    const deltaMods = deltaModification(delta);
    await this.table.update(family, deltaMods.length === 0 ? mods : [...mods, ...deltaMods]);
    if (deltaMods.length === 0) return;
    const written = (this.deltasWritten.get(family) ?? 0) + 1;
    this.deltasWritten.set(family, written % FOLD_EVERY);
    if (written >= FOLD_EVERY) this.defer(this.counts.fold(family));
  }

  /**
   * The modifications indexing one change (only the marker's removal when a later change is indexed),
   * and what they change of the counts.
   */
  private modificationsOf(change: CommittedChange): { mods: TableModification<Uint8Array, Uint8Array>[]; delta: DocumentCounts } {
    const { id, commit, known, marker } = change;
    const seq = BigInt(commit.sequence);
    const mods: TableModification<Uint8Array, Uint8Array>[] = [];
    let delta = ZERO_COUNTS;
    if (known === null || known.seq < seq) {
      const record: ChangeRecord = { id, rev: change.rev, deleted: change.deleted, time: change.time };
      mods.push({ type: 'put', key: idKey(id), value: encodeIdEntry(seq, change.deleted), version: known?.version ?? Version.NOT_EXISTS });
      if (known !== null) mods.push({ type: 'remove', key: changeKey(known.seq) });
      mods.push({ type: 'put', key: changeKey(seq), value: encodeChange(record) });
      delta = countChange(known === null ? null : known.deleted, change.deleted);
    }
    if (marker) mods.push({ type: 'remove', key: marker.key });
    return { mods, delta };
  }

  /**
   * Indexes every document marked in feed family `family` from its head, and removes the markers
   * older than `leaseMs`. Afterwards every change committed before the call has its feed entry.
   */
  async repair(family: string, leaseMs: number): Promise<void> {
    const markers: { key: Uint8Array; version: Version; ms: number }[] = [];
    for await (const page of this.table.entryIterator(family, { prefix: MARKER_PREFIX, maxKeysAtOnce: 256 })) {
      for (const e of page.items) markers.push({ key: e.key, version: e.version, ms: e.value.length === 8 ? Number(decodeUint64(e.value)) : 0 });
    }
    const now = this.clock();
    for (let i = 0; i < markers.length; i += REPAIR_CONCURRENCY) {
      await Promise.all(
        markers.slice(i, i + REPAIR_CONCURRENCY).map(async (m) => {
          await this.reindex(family, idOfMarkerKey(m.key));
          if (now - m.ms > leaseMs) await this.table.remove(family, m.key, m.version).catch((err: unknown) => ignoreConditional(err));
        }),
      );
    }
  }

  /** Indexes a document's current head, if its feed entry is behind it. */
  private async reindex(family: string, id: string): Promise<void> {
    const [[head], [known]] = await Promise.all([readHeads(this.table, [documentFamily(id)]), this.readIds(family, [id])]);
    if (head === null) return;
    const { winner } = head.value;
    await this.indexAlone(family, { id, commit: head.version, rev: formatRev(winner.pos, winner.hash), deleted: winner.deleted, time: this.changeTime(), known, marker: null });
  }

  /** Writes the clock key of feed family `family`: its version bounds what a read may list. */
  stamp(family: string): Promise<Version> {
    return this.table.put(family, CLOCK_KEY, EMPTY);
  }
}

/** Splits changes into rounds in which each document appears once, in order. */
function rounds(changes: readonly CommittedChange[]): CommittedChange[][] {
  const out: CommittedChange[][] = [];
  const seen = new Map<string, number>();
  for (const ch of changes) {
    const r = seen.get(ch.id) ?? 0;
    seen.set(ch.id, r + 1);
    (out[r] ??= []).push(ch);
  }
  return out;
}
