/**
 * CouchDB's `_all_docs`: the documents by id. Documents live in families spread over the partitions,
 * so the listing comes from the feed families' id entries (`0x02·id`, one per document, in id order
 * within a partition): each partition's range is read in order and the partitions are merged by id
 * (UTF-8 bytes: code point order, CouchDB's raw collation). Each id's head (one point read, merged by
 * the client with the others of its store) says whether its winner is deleted — deleted documents are
 * left out of a range — and which leaf it is; it keeps the winner's body too, so `includeDocs` reads
 * a document's leaf only when its head keeps no body (or to list its conflicts).
 *
 * Id entries are written by the indexing that follows an edit; the listing first repairs, as a
 * changes read does (feed-index.ts), so every document committed before it is listed.
 */
import { InvalidArgumentError } from '../errors';
import type { TableKey } from '../types';
import { BytesTable, leafOf, readHeads, readLeafNames, readWinner } from './document-reads';
import { documentOf } from './document-view';
import type { FeedIndex } from './feed-index';
import type { FeedLayout } from './feed-layout';
import type { HeadValue } from './head-codec';
import { documentFamily, ID_END, ID_PREFIX, idKey, idOfIdKey, leafKey } from './key-layout';
import { formatRev } from './rev-id';
import type { Branch } from './rev-tree';
import type { AllDocsOptions, AllDocsResponse, AllDocsRow } from './types';

/** Ids read per partition page, and heads read at once. */
const PAGE_ITEMS = 1000;
/** Documents read at once with `includeDocs`. */
const DOC_CONCURRENCY = 64;

type KeyPage = IteratorResult<{ items: TableKey<Uint8Array>[] }>;

/** One partition's id entries in the range, in listing order. */
class IdCursor {
  private items: TableKey<Uint8Array>[] = [];
  private i = 0;
  private done = false;
  head: Buffer | undefined;

  constructor(private readonly pages: AsyncIterator<{ items: TableKey<Uint8Array>[] }>) {}

  /** Moves to the next id entry (head undefined once the range is read). */
  async next(): Promise<void> {
    while (this.i >= this.items.length && !this.done) {
      const r: KeyPage = await this.pages.next();
      if (r.done) this.done = true;
      else [this.items, this.i] = [r.value.items, 0];
    }
    const k = this.i < this.items.length ? this.items[this.i++].key : undefined;
    this.head = k === undefined ? undefined : Buffer.from(k.buffer, k.byteOffset, k.byteLength);
  }

  close(): void {
    void this.pages.return?.()?.catch(() => undefined);
  }
}

/** Options as checked by the store. */
export type AllDocsQuery = Required<Pick<AllDocsOptions, 'inclusiveEnd' | 'descending' | 'skip' | 'includeDocs' | 'conflicts'>> & Pick<AllDocsOptions, 'keys' | 'startKey' | 'endKey' | 'limit'>;

/** Lists a store's documents by id. */
export class AllDocsReader {
  constructor(
    private readonly table: BytesTable,
    private readonly layout: FeedLayout,
    private readonly feed: FeedIndex,
    private readonly leaseMs: number,
  ) {}

  async read(q: AllDocsQuery): Promise<AllDocsResponse> {
    // The winners' bodies as their heads keep them, by row.
    const bodies = new Map<AllDocsRow, string>();
    const rows = q.keys !== undefined ? await this.readKeys(q.keys, q, bodies) : await this.readRange(q, bodies);
    if (q.includeDocs) await this.addDocs(rows, q.conflicts, bodies);
    return { rows };
  }

  /** The rows of the given ids, in their order (reversed with `descending`), after skip and limit. */
  private async readKeys(keys: readonly string[], q: AllDocsQuery, bodies: Map<AllDocsRow, string>): Promise<AllDocsRow[]> {
    const ordered = q.descending ? [...keys].reverse() : [...keys];
    const wanted = ordered.slice(q.skip, q.limit === undefined ? undefined : q.skip + q.limit);
    const heads = await readHeads(
      this.table,
      wanted.map((id) => documentFamily(id)),
    );
    return wanted.map((id, i) => rowOf(id, heads[i]?.value ?? null, bodies));
  }

  /** The live documents in the range, merged from every partition's id entries. */
  private async readRange(q: AllDocsQuery, bodies: Map<AllDocsRow, string>): Promise<AllDocsRow[]> {
    const [low, high] = q.descending ? [q.endKey, q.startKey] : [q.startKey, q.endKey];
    const lowInclusive = q.descending ? q.inclusiveEnd : true;
    const highInclusive = q.descending ? true : q.inclusiveEnd;
    if (low !== undefined && high !== undefined && Buffer.compare(idKey(low), idKey(high)) > 0) {
      const [first, last] = q.descending ? ['startKey', 'endKey'] : ['endKey', 'startKey'];
      throw new InvalidArgumentError(`${first} sorts before ${last}: no document can match (swap them, or change descending)`);
    }
    if (q.limit === 0) return [];
    await Promise.all(this.layout.families.map((f) => this.feed.repair(f, this.leaseMs)));
    const wanted = q.limit === undefined ? Infinity : q.skip + q.limit;
    const pageItems = Math.min(PAGE_ITEMS, wanted);
    const cursors = this.layout.families.map((family) => {
      const options = {
        from: low === undefined ? ID_PREFIX : lowInclusive ? idKey(low) : Buffer.concat([idKey(low), Buffer.of(0)]),
        to: high === undefined ? ID_END : idKey(high),
        toInclusive: high !== undefined && highInclusive,
        reverse: q.descending,
        maxKeysAtOnce: pageItems,
      };
      return new IdCursor(this.table.keyIterator(family, options)[Symbol.asyncIterator]());
    });
    try {
      await Promise.all(cursors.map((c) => c.next()));
      return await this.merge(cursors, q, wanted, pageItems, bodies);
    } finally {
      for (const c of cursors) c.close();
    }
  }

  private async merge(cursors: IdCursor[], q: AllDocsQuery, wanted: number, batch: number, bodies: Map<AllDocsRow, string>): Promise<AllDocsRow[]> {
    const rows: AllDocsRow[] = [];
    const sign = q.descending ? -1 : 1;
    for (let live = 0; live < wanted;) {
      const ids: string[] = [];
      while (ids.length < Math.min(batch, wanted - live)) {
        let best: IdCursor | undefined;
        for (const c of cursors) if (c.head !== undefined && (best === undefined || sign * Buffer.compare(c.head, best.head!) < 0)) best = c;
        if (best === undefined) break;
        ids.push(idOfIdKey(best.head!));
        await best.next();
      }
      if (ids.length === 0) break;
      const heads = await readHeads(
        this.table,
        ids.map((id) => documentFamily(id)),
      );
      ids.forEach((id, i) => {
        const head = heads[i]?.value;
        if (head === undefined || head.winner.deleted || live >= wanted) return;
        if (live++ >= q.skip) rows.push(rowOf(id, head, bodies));
      });
    }
    return rows;
  }

  /**
   * Adds each row's winning document: the body its head kept, else a point read of the leaf its head
   * names (and its leaves' names for conflicts).
   */
  private async addDocs(rows: AllDocsRow[], conflicts: boolean, bodies: ReadonlyMap<AllDocsRow, string>): Promise<void> {
    for (let i = 0; i < rows.length; i += DOC_CONCURRENCY) {
      await Promise.all(rows.slice(i, i + DOC_CONCURRENCY).map((row) => this.addDoc(row, conflicts, bodies.get(row))));
    }
  }

  private async addDoc(row: AllDocsRow, conflicts: boolean, headBody: string | undefined): Promise<void> {
    if (row.rev === null || row.deleted) {
      row.doc = null;
      return;
    }
    const family = documentFamily(row.id);
    const pos = Number(row.rev.slice(0, row.rev.indexOf('-')));
    const hash = row.rev.slice(row.rev.indexOf('-') + 1);
    const names = conflicts ? readLeafNames(this.table, family) : Promise.resolve([] as Branch[]);
    if (headBody !== undefined) {
      row.doc = documentOf(row.id, { pos, hash, deleted: false, ancestors: [], body: headBody }, { names: await names, conflicts, deletedConflicts: false, revs: false });
      return;
    }
    const [entry, leafNames] = await Promise.all([this.table.get(family, leafKey(false, pos, hash)), names]);
    // The document changed since its head was read: its winner now.
    const leaf = entry !== null ? leafOf(entry) : await readWinner(this.table, family);
    row.doc = leaf === null || leaf.deleted ? null : documentOf(row.id, leaf, { names: leafNames, conflicts, deletedConflicts: false, revs: false });
    if (row.doc !== null) row.rev = row.doc._rev;
  }
}

/** A row from a document's head (null: no such document); the body the head keeps goes to `bodies`. */
function rowOf(id: string, head: HeadValue | null, bodies: Map<AllDocsRow, string>): AllDocsRow {
  if (head === null) return { id, rev: null, deleted: false };
  const row = { id, rev: formatRev(head.winner.pos, head.winner.hash), deleted: head.winner.deleted };
  if (head.body !== null && !head.winner.deleted) bodies.set(row, head.body);
  return row;
}
