/**
 * Reads the changes feed: every partition's feed family in seq order, merged by change time.
 *
 * A read first writes each feed family's clock key; its version `end` bounds that partition's read.
 * Then it repairs (feed-index.ts): every change committed before the clock write is indexed at a seq
 * below `end` — or at a later one, when the document changed again. Within (position, end) the change
 * entries can then only leave (a document changing again moves past `end`), never arrive, so a
 * partition read up to `end` has missed nothing, and the next read resumes at `end`.
 *
 * Sequences are a position per partition (sequence-codec.ts): a result's seq holds, for its own
 * partition, its entry's seq and, for the others, how far the merge had taken them — resuming from
 * any result's seq lists exactly what came after it, and from `lastSeq` what changed since the read.
 */
import type { TableEntry } from '../types';
import type { Version } from '../version';
import { BytesTable, readHeads, readLeafNames } from './document-reads';
import type { FeedIndex } from './feed-index';
import type { FeedLayout } from './feed-layout';
import { ChangeRecord, decodeChange } from './feed-records';
import { CHANGE_END, changeKey, documentFamily, seqOfChangeKey } from './key-layout';
import { formatRev } from './rev-id';
import { revOf } from './rev-tree';
import { decodeSequence, encodeSequence, segmentsFingerprint } from './sequence-codec';
import type { Change, ChangesResponse, DocumentStoreInfo } from './types';

/** Change entries per iterator page. */
const PAGE_ITEMS = 1000;
/** Documents whose leaves are listed at once (`allLeaves`). */
const LEAVES_CONCURRENCY = 64;

type Entry = TableEntry<Uint8Array, Uint8Array>;
type PageResult = IteratorResult<{ items: Entry[] }>;

/** A decoded change entry. */
interface FeedItem {
  seq: bigint;
  change: ChangeRecord;
}

/** One partition's change entries in (position, end), a page at a time. */
class Cursor {
  private items: Entry[] = [];
  private i = 0;
  private done = false;
  private pending: Promise<PageResult> | null = null;
  private current: FeedItem | undefined;

  constructor(
    readonly partition: number,
    private readonly pages: AsyncIterator<{ items: Entry[] }> | null,
    /** Every change entry of this partition at or below it has been considered. */
    public position: bigint,
    readonly end: bigint,
    private readonly prefetch: boolean,
  ) {
    if (pages === null) this.finish();
  }

  /** Loads the next item (awaiting a page when needed); undefined once the partition is read to `end`. */
  async next(): Promise<FeedItem | undefined> {
    while (this.i >= this.items.length && !this.done) {
      const r = await (this.pending ?? this.pages!.next());
      this.pending = null;
      if (r.done) this.finish();
      else {
        this.items = r.value.items;
        this.i = 0;
        if (this.prefetch) this.pending = this.pages!.next();
      }
    }
    if (this.i >= this.items.length) return (this.current = undefined);
    const e = this.items[this.i++];
    return (this.current = { seq: seqOfChangeKey(e.key), change: decodeChange(e.value) });
  }

  get head(): FeedItem | undefined {
    return this.current;
  }

  /** Marks the partition read to `end`. */
  private finish(): void {
    this.done = true;
    if (this.position < this.end) this.position = this.end;
  }

  close(): void {
    this.pending?.catch(() => undefined);
    void this.pages?.return?.()?.catch(() => undefined);
  }
}

/** Orders cursors by their head: change time, then partition. */
function before(a: Cursor, b: Cursor): boolean {
  const x = a.head!.change.time;
  const y = b.head!.change.time;
  return x !== y ? x < y : a.partition < b.partition;
}

/** A binary min-heap of cursors by head. */
class CursorHeap {
  private readonly heap: Cursor[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(c: Cursor): void {
    const h = this.heap;
    h.push(c);
    for (let i = h.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!before(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }

  pop(): Cursor {
    const h = this.heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

/** Reads the changes feed of a store's table. */
export class ChangesReader {
  constructor(
    private readonly table: BytesTable,
    private readonly layout: FeedLayout,
    private readonly feed: FeedIndex,
    private readonly leaseMs: number,
  ) {}

  /** The changes after `since` (all when undefined), at most `limit` of them; with `allLeaves`, each document's leaves. */
  async read(since: string | undefined, limit: number | undefined, allLeaves = false): Promise<ChangesResponse> {
    const n = this.layout.partitionCount;
    const start = since === undefined ? null : decodeSequence(since, n, 'since');
    const { stamps, fingerprint } = await this.stampAndRepair();
    // A sequence of other segments (the table was deleted and created again) reads from the beginning.
    const from = start !== null && start.fingerprint === fingerprint ? start.positions : new Array<bigint>(n).fill(0n);
    const pageItems = Math.min(limit ?? PAGE_ITEMS, PAGE_ITEMS);
    const cursors = this.layout.families.map((family, p) => {
      const end = BigInt(stamps[p].sequence);
      // A position at or past the end (nothing to read) opens no iterator.
      // Read past `end` too: an edit indexed during this read moves its document's entry from below
      // `end` to above it in one update, and a page read after that move finds only the new entry,
      // further on. Entries past `end` are listed, but the position stops at `end` (see merge).
      const pages = from[p] + 1n < end ? this.table.entryIterator(family, { from: changeKey(from[p] + 1n), to: CHANGE_END, maxKeysAtOnce: pageItems })[Symbol.asyncIterator]() : null;
      return new Cursor(p, pages, from[p], end, limit === undefined);
    });
    let response: ChangesResponse;
    try {
      response = await this.merge(cursors, fingerprint, limit ?? Infinity);
    } finally {
      for (const c of cursors) c.close();
    }
    if (allLeaves) await this.addLeaves(response.results);
    return response;
  }

  /**
   * True when a change may have come after `since` (a sequence of this feed): a change entry past
   * its position in some partition. Reads only — no clock write, no repair — so it is cheap enough
   * to poll; a change whose writer died before indexing it shows only to a full read.
   */
  async hasChangesAfter(since: string): Promise<boolean> {
    const { positions } = decodeSequence(since, this.layout.partitionCount, 'since');
    const found = await Promise.all(
      this.layout.families.map(async (family, p) => {
        for await (const page of this.table.keyIterator(family, { from: changeKey(positions[p] + 1n), to: CHANGE_END, maxKeysAtOnce: 1 })) return page.items.length > 0;
        return false;
      }),
    );
    return found.includes(true);
  }

  /** The documents by the winner of their newest change (deleted or not; feed-counts.ts), and a sequence after every change so far. */
  async info(): Promise<DocumentStoreInfo> {
    const { stamps, fingerprint } = await this.stampAndRepair();
    const counts = await Promise.all(this.layout.families.map((family) => this.feed.counts.count(family)));
    const positions = stamps.map((s) => BigInt(s.sequence));
    return {
      documents: counts.reduce((sum, c) => sum + c.documents, 0),
      deletedDocuments: counts.reduce((sum, c) => sum + c.deletedDocuments, 0),
      updateSeq: encodeSequence({ fingerprint, positions }),
    };
  }

  /** A sequence after every change made so far (what `info` says, without counting). */
  async updateSeq(): Promise<string> {
    const { stamps, fingerprint } = await this.stampAndRepair();
    return encodeSequence({ fingerprint, positions: stamps.map((s) => BigInt(s.sequence)) });
  }

  /** Writes each feed family's clock, then indexes every marked document (see the module comment). */
  private async stampAndRepair(): Promise<{ stamps: Version[]; fingerprint: number }> {
    const stamps = await Promise.all(this.layout.families.map((f) => this.feed.stamp(f)));
    const fingerprint = segmentsFingerprint(stamps.map((s) => s.segmentId));
    await Promise.all(this.layout.families.map((f) => this.feed.repair(f, this.leaseMs)));
    return { stamps, fingerprint };
  }

  /** Adds every leaf rev to each result, the winner first: from the head alone when it is the only leaf. */
  private async addLeaves(results: Change[]): Promise<void> {
    const heads = await readHeads(
      this.table,
      results.map((r) => documentFamily(r.id)),
    );
    const several: number[] = [];
    results.forEach((r, i) => {
      const head = heads[i];
      if (head === null) r.leaves = [r.rev];
      else if (head.value.leafCount <= 1) r.leaves = [formatRev(head.value.winner.pos, head.value.winner.hash)];
      else several.push(i);
    });
    for (let i = 0; i < several.length; i += LEAVES_CONCURRENCY) {
      await Promise.all(
        several.slice(i, i + LEAVES_CONCURRENCY).map(async (j) => {
          const names = await readLeafNames(this.table, documentFamily(results[j].id));
          results[j].leaves = names.reverse().map(revOf);
        }),
      );
    }
  }

  private async merge(cursors: Cursor[], fingerprint: number, limit: number): Promise<ChangesResponse> {
    const heap = new CursorHeap();
    await Promise.all(cursors.map((c) => c.next()));
    for (const c of cursors) if (c.head) heap.push(c);
    const positions = cursors.map((c) => c.position);
    const results: Change[] = [];
    while (heap.size > 0 && results.length < limit) {
      const c = heap.pop();
      const { seq, change } = c.head!;
      // Past `end` a change may still be unindexed below this one (its marker is repaired by the next
      // read): the position stays at `end`, and the next read lists this change again.
      c.position = seq < c.end ? seq : c.end;
      if (await c.next()) heap.push(c);
      positions[c.partition] = c.position;
      results.push({ id: change.id, seq: encodeSequence({ fingerprint, positions }), rev: change.rev, deleted: change.deleted });
    }
    return { results, lastSeq: encodeSequence({ fingerprint, positions }) };
  }
}
