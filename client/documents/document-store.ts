/**
 * Documents with revision trees on key families (DESIGN §5): CouchDB's model as CouchDB on
 * FoundationDB stores it (seed 001), on the public {@link KeyValueTable} interface, so it runs on a
 * cluster and on the in-memory table alike. docs/documents.md describes the key layout, the write
 * path and the changes feed; key-layout.ts the keys; edit-plan.ts and replication-plan.ts the rules.
 */
import { InvalidArgumentError, KvtError, ObjectClosedError } from '../errors';
import { AllDocsReader } from './all-docs-reader';
import { ChangesReader } from './changes-reader';
import { checkBody, checkFlag, checkId, checkInteger, checkOptionalRev, checkOptions, checkPath, DEFAULT_REVS_LIMIT, MAX_DOCUMENT_ID_LENGTH, MAX_REVS_LIMIT } from './document-input';
import { BytesTable, readLeaf, readLeafNames, readLiveWinner, readWinner } from './document-reads';
import { documentOf } from './document-view';
import { DocumentWriter } from './document-writer';
import { FeedIndex } from './feed-index';
import { FeedLayout } from './feed-layout';
import { documentFamily } from './key-layout';
import { checkLocalId, LocalDocuments, parseLocalRev } from './local-documents';
import { openAllRevs, openRevs } from './open-revs';
import { Replicator } from './replicator';
import type { ReplicatedEdit } from './replication-plan';
import { describe, parseRev } from './rev-id';
import type { Branch } from './rev-tree';
import type {
  AllDocsOptions,
  AllDocsResponse,
  BulkDocsOptions,
  BulkDocsResult,
  ChangesOptions,
  ChangesResponse,
  DocumentBody,
  DocumentStoreInfo,
  DocumentStoreOptions,
  DocumentWriteResult,
  GetDocumentOptions,
  LocalDocument,
  OpenRev,
  OpenRevsOptions,
  PutDocumentOptions,
  RevsDiffEntry,
  StoredDocument,
} from './types';

/** The default lease of an edit's marker: 5 minutes. */
export const DEFAULT_MARKER_LEASE_MS = 5 * 60_000;
/** The most results one changes read returns. */
export const MAX_CHANGES_LIMIT = 100_000;
/** The most documents of one bulkDocs or revsDiff call, and the most keys or rows of one allDocs call. */
export const MAX_BULK_DOCUMENTS = 10_000;
/** The longest a changes read waits for a change (`timeoutMs`): 10 minutes. */
export const MAX_CHANGES_WAIT_MS = 10 * 60_000;
/** The most revs of one openRevs call. */
export const MAX_OPEN_REVS = 1000;
/** How often a waiting changes read looks for a change. */
const CHANGES_POLL_MS = 200;

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
  private readonly listing: AllDocsReader;
  private readonly locals: LocalDocuments;
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
    this.listing = new AllDocsReader(table, this.layout, feed, leaseMs);
    this.locals = new LocalDocuments(table);
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
    // The winner without its path is one point read of the head (which keeps the winner's body).
    const [leaf, names] = await Promise.all([
      rev !== null ? readLeaf(this.table, family, rev.pos, rev.hash) : revs ? readWinner(this.table, family) : readLiveWinner(this.table, family),
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
   * from any result's `seq`. With `allLeaves` each result lists the document's leaves; with
   * `timeoutMs`, a read that finds nothing waits (polling) until a change comes, the time is up or
   * `signal` aborts, and then reads again.
   * @throws InvalidArgumentError for a `since` that is not a sequence of this feed, or a bad option.
   */
  async changes(options?: ChangesOptions): Promise<ChangesResponse> {
    this.checkOpen();
    const o = checkOptions(options, 'changes options');
    const limit = o.limit === undefined ? undefined : checkInteger(o.limit, 'limit', 1, MAX_CHANGES_LIMIT);
    const allLeaves = checkFlag(o.allLeaves, 'allLeaves');
    const timeoutMs = o.timeoutMs === undefined ? 0 : checkInteger(o.timeoutMs, 'timeoutMs', 0, MAX_CHANGES_WAIT_MS);
    const signal = o.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError(`signal must be an AbortSignal, got ${describe(signal)}`);
    const first = await this.reader.read(o.since, limit, allLeaves);
    if (first.results.length > 0 || timeoutMs === 0) return first;
    return this.waitForChanges(first, limit, allLeaves, Date.now() + timeoutMs, signal);
  }

  /** Polls for a change after `last` until `deadline`; a full read when one shows, and once more at the end (it repairs). */
  private async waitForChanges(last: ChangesResponse, limit: number | undefined, allLeaves: boolean, deadline: number, signal?: AbortSignal): Promise<ChangesResponse> {
    while (!this.closed && !signal?.aborted && Date.now() < deadline) {
      await sleep(Math.min(CHANGES_POLL_MS, deadline - Date.now()), signal);
      if (this.closed || signal?.aborted) break;
      const due = Date.now() >= deadline;
      if (due || (await this.reader.hasChangesAfter(last.lastSeq))) {
        const next = await this.reader.read(last.lastSeq, limit, allLeaves);
        if (next.results.length > 0 || due) return next;
        last = next;
      }
    }
    return last;
  }

  /**
   * CouchDB's `_all_docs`: the documents by id (UTF-8 byte order), live ones only, within
   * `startKey`…`endKey`, after `skip` and at most `limit`; or, with `keys`, those documents in that
   * order (rev null for a missing one; deleted ones flagged). `includeDocs` adds each winner.
   * @throws InvalidArgumentError for a bad option, or a range that sorts backwards.
   */
  async allDocs(options?: AllDocsOptions): Promise<AllDocsResponse> {
    this.checkOpen();
    const o = checkOptions(options, 'allDocs options');
    const keys = o.keys === undefined ? undefined : checkIds(o.keys, 'keys');
    const limit = o.limit === undefined ? undefined : checkInteger(o.limit, 'limit', 0, MAX_CHANGES_LIMIT);
    const skip = o.skip === undefined ? 0 : checkInteger(o.skip, 'skip', 0, Number.MAX_SAFE_INTEGER);
    const startKey = o.startKey === undefined ? undefined : checkKey(o.startKey, 'startKey');
    const endKey = o.endKey === undefined ? undefined : checkKey(o.endKey, 'endKey');
    const inclusiveEnd = o.inclusiveEnd === undefined ? true : checkFlag(o.inclusiveEnd, 'inclusiveEnd');
    const [descending, includeDocs, conflicts] = [checkFlag(o.descending, 'descending'), checkFlag(o.includeDocs, 'includeDocs'), checkFlag(o.conflicts, 'conflicts')];
    return this.listing.read({ keys, limit, skip, startKey, endKey, inclusiveEnd, descending, includeDocs, conflicts });
  }

  /**
   * CouchDB's `open_revs`: the leaves `revs` of a document with their bodies (deleted ones too), or
   * `{ missing: rev }` for a rev that is not a leaf; `'all'` for every leaf, the winner first. With
   * `latest`, a rev that is no longer a leaf gives the leaves descending from it.
   */
  async openRevs(id: string, revs: readonly string[] | 'all', options?: OpenRevsOptions): Promise<OpenRev[]> {
    this.checkOpen();
    checkId(id);
    const o = checkOptions(options, 'openRevs options');
    const flags = { latest: checkFlag(o.latest, 'latest'), revs: checkFlag(o.revs, 'revs') };
    if (revs === 'all') return openAllRevs(this.table, id, flags);
    if (!Array.isArray(revs)) throw new InvalidArgumentError(`revs must be an array of revs or "all", got ${describe(revs)}`);
    if (revs.length > MAX_OPEN_REVS) throw new InvalidArgumentError(`revs has ${revs.length} revs; the maximum is ${MAX_OPEN_REVS}`);
    const parsed = revs.map((r, i) => ({ text: r as string, ...parseRev(r, `revs[${i}]`) }));
    return openRevs(this.table, id, parsed, flags);
  }

  /** The local document `id` (CouchDB's `_local/<id>`: not replicated, never listed), or null. */
  async getLocal(id: string): Promise<LocalDocument | null> {
    this.checkOpen();
    return this.locals.get(checkLocalId(id));
  }

  /**
   * Creates local document `id` (no `rev`) or replaces it at `rev` (`"0-<n>"`); resolves its new rev.
   * @throws DocumentConflictError when it exists (no rev) or is not at `rev`.
   */
  async putLocal(id: string, body: DocumentBody, options?: { rev?: string }): Promise<DocumentWriteResult> {
    this.checkOpen();
    checkLocalId(id);
    const o = checkOptions(options, 'putLocal options');
    return this.locals.put(id, body, o.rev === undefined ? null : parseLocalRev(o.rev, 'rev'));
  }

  /** Removes local document `id` at `rev`: true when removed, false when there is none. @throws DocumentConflictError when it is not at `rev`. */
  async removeLocal(id: string, rev: string): Promise<boolean> {
    this.checkOpen();
    checkLocalId(id);
    return this.locals.remove(id, parseLocalRev(rev, 'rev'));
  }

  /**
   * The documents and deleted documents (counts kept as changes are indexed, docs/documents.md
   * "Counts": the first call on a table read its id entries once), and the feed's current sequence.
   */
  async info(): Promise<DocumentStoreInfo> {
    this.checkOpen();
    return this.reader.info();
  }

  /** The feed's current sequence: `changes({ since })` from it lists only later changes (CouchDB's `since=now`). */
  async updateSeq(): Promise<string> {
    this.checkOpen();
    return this.reader.updateSeq();
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

/** Ids of an allDocs `keys` list. */
function checkIds(keys: unknown, field: string): string[] {
  if (!Array.isArray(keys)) throw new InvalidArgumentError(`${field} must be an array of document ids, got ${describe(keys)}`);
  if (keys.length > MAX_BULK_DOCUMENTS) throw new InvalidArgumentError(`${field} has ${keys.length} ids; the maximum is ${MAX_BULK_DOCUMENTS}`);
  return keys.map((k, i) => checkKey(k, `${field}[${i}]`));
}

/** A key of an allDocs range or list: any string (it need not name a document). */
function checkKey(key: unknown, field: string): string {
  if (typeof key !== 'string') throw new InvalidArgumentError(`${field} must be a string, got ${describe(key)}`);
  if (/[\uD800-\uDFFF]/u.test(key)) throw new InvalidArgumentError(`${field} ${describe(key)} has a lone surrogate: it is not valid UTF-16`);
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > MAX_DOCUMENT_ID_LENGTH) throw new InvalidArgumentError(`${field} is ${bytes} bytes; the maximum is ${MAX_DOCUMENT_ID_LENGTH}`);
  return key;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}
