/**
 * Documents with revision trees on key families (DESIGN §5): CouchDB's model as CouchDB on
 * FoundationDB stores it (seed 001), on the public {@link KeyValueTable} interface, so it runs on a
 * cluster and on the in-memory table alike. docs/documents.md describes the key layout, the write
 * path and the changes feed; key-layout.ts the keys; edit-plan.ts and replication-plan.ts the rules.
 */
import { InvalidArgumentError, KvtError, ObjectClosedError } from '../errors';
import { ChangesReader } from './changes-reader';
import { checkBody, checkFlag, checkId, checkInteger, checkOptionalRev, checkOptions, checkPath, DEFAULT_REVS_LIMIT, MAX_REVS_LIMIT } from './document-input';
import { BytesTable, readLeaf, readLeafNames, readWinner, StoredLeaf } from './document-reads';
import { DocumentWriter } from './document-writer';
import { FeedIndex } from './feed-index';
import { FeedLayout } from './feed-layout';
import { documentFamily } from './key-layout';
import { Replicator } from './replicator';
import type { ReplicatedEdit } from './replication-plan';
import { describe, parseRev } from './rev-id';
import { Branch, revisionsOf, revOf } from './rev-tree';
import type {
  BulkDocsOptions,
  BulkDocsResult,
  ChangesOptions,
  ChangesResponse,
  DocumentBody,
  DocumentStoreOptions,
  DocumentWriteResult,
  GetDocumentOptions,
  PutDocumentOptions,
  RevsDiffEntry,
  StoredDocument,
} from './types';

/** The default lease of an edit's marker: 5 minutes. */
export const DEFAULT_MARKER_LEASE_MS = 5 * 60_000;
/** The most results one changes read returns. */
export const MAX_CHANGES_LIMIT = 100_000;
/** The most documents of one bulkDocs or revsDiff call. */
export const MAX_BULK_DOCUMENTS = 10_000;

/** The members of a replicated document that are not its body. */
const SPECIAL_MEMBERS = new Set(['_id', '_rev', '_revisions', '_deleted']);

function partitionCountOf(table: BytesTable, options: DocumentStoreOptions): number {
  const exposed = (table as unknown as { partitionCount?: unknown }).partitionCount;
  const given = options.partitionCount;
  if (given !== undefined && typeof exposed === 'number' && given !== exposed) {
    throw new InvalidArgumentError(`partitionCount is ${describe(given)} but the table has ${exposed} partitions`);
  }
  const n = given ?? exposed;
  if (n === undefined) throw new InvalidArgumentError('partitionCount is required: this table does not expose its partition count (manager.getKeyValueTableConfiguration tells it)');
  return n as number;
}

/**
 * CouchDB-style documents in a key-value table whose keys and values are bytes (`Serializers.bytes`
 * or `bytesView` for both). One key family per document, one entry per leaf of its revision tree,
 * keyed so the winning leaf sorts last; a changes feed family per partition.
 *
 * - Edits: `put` / `remove` extend a live leaf (or create the document); a stale, unknown or deleted
 *   leaf's rev, or creating an existing document, is a {@link DocumentConflictError}. Each is one
 *   atomic update of the document's family conditioned on what it read: of concurrent editors at one
 *   rev exactly one succeeds.
 * - Replication: `bulkDocs(docs, { newEdits: false })` merges the revision paths sent; `revsDiff`
 *   says which revs are missing.
 * - Reads: `get` returns the winner (or a given leaf) CouchDB-style; bodies of non-leaf revisions are
 *   not kept (as after CouchDB's compaction), so reading such a rev gives null.
 * - Changes: `changes` lists each document once, at its newest change, resumable from any seq.
 *
 * Every method checks its arguments first (InvalidArgumentError naming the field and the limit) and
 * throws ObjectClosedError after close(). The table stays the caller's: close() does not close it.
 */
export class DocumentStore implements AsyncDisposable {
  /** Revision positions each branch keeps, counting its leaf. */
  readonly revsLimit: number;
  private readonly layout: FeedLayout;
  private readonly writer: DocumentWriter;
  private readonly replicator: Replicator;
  private readonly reader: ChangesReader;
  private readonly feed: FeedIndex;
  private closed = false;

  /** @throws InvalidArgumentError for a bad option (it names it and its limit) or a missing partition count. */
  constructor(
    private readonly table: BytesTable,
    options: DocumentStoreOptions = {},
  ) {
    if (table === null || typeof table !== 'object' || typeof table.entryIterator !== 'function') throw new InvalidArgumentError('DocumentStore needs a KeyValueTable of bytes keys and values');
    const o = checkOptions(options, 'DocumentStore options');
    this.revsLimit = o.revsLimit === undefined ? DEFAULT_REVS_LIMIT : checkInteger(o.revsLimit, 'revsLimit', 1, MAX_REVS_LIMIT);
    const clock = o.clock ?? Date.now;
    if (typeof clock !== 'function') throw new InvalidArgumentError(`clock must be a function returning milliseconds, got ${typeof clock}`);
    const leaseMs = o.markerLeaseMs === undefined ? DEFAULT_MARKER_LEASE_MS : checkInteger(o.markerLeaseMs, 'markerLeaseMs', 1, 2 ** 31 - 1);
    this.layout = new FeedLayout(partitionCountOf(table, o));
    const feed = (this.feed = new FeedIndex(table, clock));
    this.writer = new DocumentWriter(table, this.layout, feed, this.revsLimit);
    this.replicator = new Replicator(table, this.layout, feed, this.revsLimit);
    this.reader = new ChangesReader(table, this.layout, feed, leaseMs);
  }

  /**
   * Creates a document (no `rev`), or extends the live leaf `rev` with `body`; `deleted` stores the
   * edit as a deletion. Without a rev over a document whose leaves are all deleted, the new leaf
   * extends the winning deleted branch.
   * @throws DocumentConflictError when the document exists (no rev), or `rev` is not a live leaf.
   */
  async put(id: string, body: DocumentBody, options?: PutDocumentOptions): Promise<DocumentWriteResult> {
    this.checkOpen();
    checkId(id);
    const o = checkOptions(options, 'put options');
    const rev = checkOptionalRev(o.rev, 'rev');
    const deleted = checkFlag(o.deleted, 'deleted');
    return this.writer.edit({ id, rev, deleted, body: checkBody(body, id) });
  }

  /** Deletes the live leaf `rev` (a tombstone with an empty body). @throws DocumentConflictError as put does. */
  async remove(id: string, rev: string): Promise<DocumentWriteResult> {
    this.checkOpen();
    checkId(id);
    return this.writer.edit({ id, rev: parseRev(rev, 'rev'), deleted: true, body: '{}' });
  }

  /**
   * The winning leaf of a document, or null when it is missing or deleted; with `rev`, that leaf
   * (deleted or not), or null when it is not a leaf (non-leaf bodies are not kept).
   */
  async get(id: string, options?: GetDocumentOptions): Promise<StoredDocument | null> {
    this.checkOpen();
    checkId(id);
    const o = checkOptions(options, 'get options');
    const rev = checkOptionalRev(o.rev, 'rev');
    const [conflicts, deletedConflicts, revs] = [checkFlag(o.conflicts, 'conflicts'), checkFlag(o.deletedConflicts, 'deletedConflicts'), checkFlag(o.revs, 'revs')];
    const family = documentFamily(id);
    const [leaf, names] = await Promise.all([
      rev === null ? readWinner(this.table, family) : readLeaf(this.table, family, rev.pos, rev.hash),
      conflicts || deletedConflicts ? readLeafNames(this.table, family) : Promise.resolve([] as Branch[]),
    ]);
    if (leaf === null || (rev === null && leaf.deleted)) return null;
    return documentOf(id, leaf, { names, conflicts, deletedConflicts, revs });
  }

  /**
   * Writes documents CouchDB's `_bulk_docs` way. `newEdits: false` (replication): each document's
   * `_revisions` path (or its `_rev` alone) merges into its tree — a known rev is a no-op, a path
   * through a leaf extends it, any other becomes a conflicting branch; every result is the rev sent.
   * Otherwise each document is a {@link put} (`_rev` the leaf to extend, `_deleted` a deletion), and
   * a conflict is that document's `error`. Bad input throws before anything is written.
   */
  async bulkDocs(docs: readonly DocumentBody[], options?: BulkDocsOptions): Promise<BulkDocsResult[]> {
    this.checkOpen();
    if (!Array.isArray(docs)) throw new InvalidArgumentError(`docs must be an array, got ${describe(docs)}`);
    if (docs.length > MAX_BULK_DOCUMENTS) throw new InvalidArgumentError(`docs has ${docs.length} documents; the maximum is ${MAX_BULK_DOCUMENTS}`);
    const o = checkOptions(options, 'bulkDocs options');
    const newEdits = o.newEdits === undefined ? true : checkFlag(o.newEdits, 'newEdits');
    return newEdits ? this.bulkEdits(docs) : this.bulkReplicate(docs);
  }

  private async bulkReplicate(docs: readonly DocumentBody[]): Promise<BulkDocsResult[]> {
    const edits = new Map<string, ReplicatedEdit[]>();
    const results = docs.map((doc, i) => {
      const field = `docs[${i}]`;
      const { id, rev, deleted, body } = splitDocument(doc, field);
      if (rev === undefined) throw new InvalidArgumentError(`${field}._rev is required with newEdits: false`);
      const path = checkPath(parseRev(rev, `${field}._rev`), doc._revisions, deleted, field);
      const list = edits.get(id) ?? [];
      list.push({ path, body: checkBody(body, id) });
      edits.set(id, list);
      return { id, rev: rev as string };
    });
    await this.replicator.write(edits);
    return results;
  }

  private async bulkEdits(docs: readonly DocumentBody[]): Promise<BulkDocsResult[]> {
    const edits = docs.map((doc, i) => {
      const field = `docs[${i}]`;
      const { id, rev, deleted, body } = splitDocument(doc, field);
      return { id, rev: checkOptionalRev(rev, `${field}._rev`), deleted, body: checkBody(body, id) };
    });
    return Promise.all(
      edits.map(async (edit): Promise<BulkDocsResult> => {
        try {
          return await this.writer.edit(edit);
        } catch (err) {
          if (err instanceof KvtError) return { id: edit.id, error: err };
          throw err;
        }
      }),
    );
  }

  /**
   * CouchDB's `_revs_diff`: for each document id, the given revs it does not know (as a leaf or a
   * kept ancestor), with the leaves that could be their ancestors; documents missing none are left out.
   */
  async revsDiff(revs: Record<string, readonly string[]>): Promise<Record<string, RevsDiffEntry>> {
    this.checkOpen();
    if (revs === null || typeof revs !== 'object' || Array.isArray(revs)) throw new InvalidArgumentError(`revs must be an object of document id → revs, got ${describe(revs)}`);
    const ids = Object.keys(revs);
    if (ids.length > MAX_BULK_DOCUMENTS) throw new InvalidArgumentError(`revs names ${ids.length} documents; the maximum is ${MAX_BULK_DOCUMENTS}`);
    const parsed = new Map<string, { text: string; pos: number; hash: string }[]>();
    for (const id of ids) {
      checkId(id, `revs key ${describe(id)}`);
      const list = revs[id];
      if (!Array.isArray(list)) throw new InvalidArgumentError(`revs[${describe(id)}] must be an array of revs, got ${describe(list)}`);
      parsed.set(
        id,
        list.map((r, i) => ({ text: r as string, ...parseRev(r, `revs[${describe(id)}][${i}]`) })),
      );
    }
    return this.replicator.revsDiff(parsed);
  }

  /**
   * The changes feed: each document once, at its newest change, in sequence order (per partition;
   * partitions merged by change time), after `since` and at most `limit`. Resume from `lastSeq`, or
   * from any result's `seq`.
   * @throws InvalidArgumentError for a `since` that is not a sequence of this feed, or a bad limit.
   */
  async changes(options?: ChangesOptions): Promise<ChangesResponse> {
    this.checkOpen();
    const o = checkOptions(options, 'changes options');
    const limit = o.limit === undefined ? undefined : checkInteger(o.limit, 'limit', 1, MAX_CHANGES_LIMIT);
    return this.reader.read(o.since, limit);
  }

  /**
   * Closes the store (not its table), once the feed indexing of its edits has ended; later calls fail
   * with ObjectClosedError. Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.feed.drain();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private checkOpen(): void {
    if (this.closed) throw new ObjectClosedError('DocumentStore is closed');
  }
}

/** A CouchDB-shaped document: splits its special members from its body. */
function splitDocument(doc: unknown, field: string): { id: string; rev: unknown; deleted: boolean; body: DocumentBody } {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new InvalidArgumentError(`${field} must be a document object, got ${describe(doc)}`);
  const d = doc as Record<string, unknown>;
  const id = checkId(d._id, `${field}._id`);
  const body: DocumentBody = {};
  for (const [k, v] of Object.entries(d)) if (!SPECIAL_MEMBERS.has(k)) body[k] = v;
  return { id, rev: d._rev, deleted: checkFlag(d._deleted, `${field}._deleted`), body };
}

/** The document a leaf reads as. */
function documentOf(id: string, leaf: StoredLeaf, o: { names: Branch[]; conflicts: boolean; deletedConflicts: boolean; revs: boolean }): StoredDocument {
  const doc = { _id: id, _rev: revOf(leaf), ...(JSON.parse(leaf.body) as DocumentBody) } as StoredDocument;
  if (leaf.deleted) doc._deleted = true;
  const others = o.names.filter((b) => !(b.pos === leaf.pos && b.hash === leaf.hash && b.deleted === leaf.deleted)).reverse();
  if (o.conflicts) {
    const live = others.filter((b) => !b.deleted).map(revOf);
    if (live.length > 0) doc._conflicts = live;
  }
  if (o.deletedConflicts) {
    const dead = others.filter((b) => b.deleted).map(revOf);
    if (dead.length > 0) doc._deleted_conflicts = dead;
  }
  if (o.revs) doc._revisions = revisionsOf(leaf);
  return doc;
}
