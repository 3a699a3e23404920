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
import type { BytesTable } from './document-reads';
import type { FeedIndex } from './feed-index';
import type { FeedLayout } from './feed-layout';
import { ChangeRecord, decodeChange } from './feed-records';
import { changeKey, seqOfChangeKey } from './key-layout';
import { decodeSequence, encodeSequence, segmentsFingerprint } from './sequence-codec';
import type { Change, ChangesResponse } from './types';

/** Change entries per iterator page. */
const PAGE_ITEMS = 1000;

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

  /** The changes after `since` (all when undefined), at most `limit` of them. */
  async read(since: string | undefined, limit: number | undefined): Promise<ChangesResponse> {
    const n = this.layout.partitionCount;
    const start = since === undefined ? null : decodeSequence(since, n, 'since');
    const stamps = await Promise.all(this.layout.families.map((f) => this.feed.stamp(f)));
    const fingerprint = segmentsFingerprint(stamps.map((s) => s.segmentId));
    // A sequence of other segments (the table was deleted and created again) reads from the beginning.
    const from = start !== null && start.fingerprint === fingerprint ? start.positions : new Array<bigint>(n).fill(0n);
    await Promise.all(this.layout.families.map((f) => this.feed.repair(f, this.leaseMs)));
    const pageItems = Math.min(limit ?? PAGE_ITEMS, PAGE_ITEMS);
    const cursors = this.layout.families.map((family, p) => {
      const end = BigInt(stamps[p].sequence);
      // A position at or past the end (nothing to read) opens no iterator.
      const pages = from[p] + 1n < end ? this.table.entryIterator(family, { from: changeKey(from[p] + 1n), to: changeKey(end), maxKeysAtOnce: pageItems })[Symbol.asyncIterator]() : null;
      return new Cursor(p, pages, from[p], end, limit === undefined);
    });
    try {
      return await this.merge(cursors, fingerprint, limit ?? Infinity);
    } finally {
      for (const c of cursors) c.close();
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
      c.position = seq;
      if (await c.next()) heap.push(c);
      positions[c.partition] = c.position;
      results.push({ id: change.id, seq: encodeSequence({ fingerprint, positions }), rev: change.rev, deleted: change.deleted });
    }
    return { results, lastSeq: encodeSequence({ fingerprint, positions }) };
  }
}
