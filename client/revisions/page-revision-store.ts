/**
 * Page revisions and renders stored as key families (DESIGN §4): RESTBase's `current_and_recent`
 * model with application-enforced retention (seed 000), on the public {@link KeyValueTable}
 * interface, so it runs on a cluster and on the in-memory table alike. See key-layout.ts for the
 * keys, render-codec.ts for a record, retention.ts for the window, render-writer.ts for a write.
 */
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError, ObjectClosedError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import { Archiver, fromArchive, MovedHistory } from './archiving';
import { after, KIND, positionOf, readPosition, recordKey, revisionPrefix } from './key-layout';
import { ListMode, PageTokens } from './page-token';
import { EncodedRender, encodeRender } from './render-codec';
import { bodyOf, checkContent, checkDuration, checkLimit, checkReadOptions, checkRev, checkTid, checkTitle, readAs } from './render-input';
import { RawEntry, RenderReader } from './render-reader';
import { RenderTarget, RenderWriter } from './render-writer';
import { TimeUuidGenerator } from './time-uuid';
import type { ListRevisionsOptions, PageRevisionStoreOptions, PutRenderOptions, ReadRenderOptions, Render, RenderedRevision, RenderInput, RenderKey, RevisionPage } from './types';

/** The default recency window and historical TTL: 24 hours. */
export const DEFAULT_RECENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_HISTORICAL_TTL_MS = 24 * 60 * 60 * 1000;

/** Pages `putRenders` writes at once. */
const PAGES_AT_ONCE = 16;

/** Keys read per iterator page while a listing skips older renders of a revision. */
const LIST_SCAN_PAGE = 256;

type Table = KeyValueTable<Uint8Array, Uint8Array>;

function checkOptions(
  options: PageRevisionStoreOptions,
): Required<Omit<PageRevisionStoreOptions, 'render' | 'tokenSecret' | 'archive'>> & Pick<PageRevisionStoreOptions, 'render' | 'archive'> & { tokenSecret: Uint8Array } {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError(`PageRevisionStore options must be an object, got ${options === null ? 'null' : typeof options}`);
  const clock = options.clock ?? Date.now;
  if (typeof clock !== 'function') throw new InvalidArgumentError(`clock must be a function returning milliseconds, got ${typeof clock}`);
  const archive = options.archive;
  if (archive !== undefined && (archive === null || typeof archive !== 'object' || typeof archive.append !== 'function' || typeof archive.get !== 'function')) {
    throw new InvalidArgumentError('archive must be an ArchiveStore (KvtArchiveStore, CassandraArchiveStore or another with append and get)');
  }
  if (options.render !== undefined && typeof options.render !== 'function')
    throw new InvalidArgumentError(`render must be a function (title, rev) => Promise<render | null>, got ${typeof options.render}`);
  const secret = options.tokenSecret ?? randomBytes(32);
  if (!(typeof secret === 'string' || secret instanceof Uint8Array) || secret.length === 0) throw new InvalidArgumentError('tokenSecret must be a non-empty string or Uint8Array');
  return {
    recencyWindowMs: checkDuration('recencyWindowMs', options.recencyWindowMs ?? DEFAULT_RECENCY_WINDOW_MS),
    historicalTtlMs: checkDuration('historicalTtlMs', options.historicalTtlMs ?? DEFAULT_HISTORICAL_TTL_MS),
    clock,
    render: options.render,
    archive,
    tokenSecret: typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret,
  };
}

/**
 * The revisions and renders of wiki pages in one key-value table whose keys and values are bytes
 * (`Serializers.bytes` for keys; `bytesView` for values saves a copy of each value read, since a
 * render is decoded or copied as it is read). One key family per page; within it a render's key
 * sorts by (rev, tid) descending, so the latest render is the family's first key.
 *
 * - Writes: a render (value, headers, named parts) is written in one atomic update — reassembled
 *   whole or not at all — and never displaces a higher (rev, tid): precedence is by (rev, tid), not
 *   arrival. A render over one value (MAX_VALUE_LENGTH) is split into chunks, up to MAX_RENDER_BYTES.
 * - Retention: a superseded render stays readable for `recencyWindowMs` after it was superseded; a
 *   later write to the page culls what has expired in its own atomic update. Culling is best-effort:
 *   until a write culls it, an expired render is still read.
 * - Historical reads: `getRevision` of a revision found nowhere asks `render`, and keeps the result
 *   for `historicalTtlMs` (apart from the hot renders: it never becomes the page's latest).
 *
 * Every method checks its arguments first (InvalidArgumentError naming the field and the limit) and
 * throws ObjectClosedError after close(). The table stays the caller's: close() does not close it.
 */
export class PageRevisionStore implements AsyncDisposable {
  private readonly options: ReturnType<typeof checkOptions>;
  private readonly reader: RenderReader;
  private readonly writer: RenderWriter;
  private readonly archiver: Archiver | undefined;
  private readonly tids: TimeUuidGenerator;
  private readonly tokens: PageTokens;
  /** Renders under way for a miss, by title and rev: concurrent misses share one. */
  private readonly rendering = new Map<string, Promise<Render | null>>();
  private closed = false;

  /** @throws InvalidArgumentError for a bad option (it names it and its limit). */
  constructor(
    private readonly table: Table,
    options: PageRevisionStoreOptions = {},
  ) {
    if (table === null || typeof table !== 'object' || typeof table.entryIterator !== 'function') throw new InvalidArgumentError('PageRevisionStore needs a KeyValueTable of bytes keys and values');
    this.options = checkOptions(options);
    this.reader = new RenderReader(table, this.options.clock);
    this.archiver = this.options.archive ? new Archiver(table, this.reader, this.options.archive) : undefined;
    this.writer = new RenderWriter(table, this.options.clock, this.options.recencyWindowMs, this.archiver);
    this.tids = new TimeUuidGenerator(this.options.clock);
    this.tokens = new PageTokens(this.options.tokenSecret);
  }

  /**
   * Stores a render; `tid` defaults to a new time-based UUID. Resolves the render's key.
   * @throws RenderExistsError with `ifAbsent` when the (rev, tid) is already stored (nothing written).
   * @throws InvalidArgumentError for a bad title, rev, tid, value, header or part.
   */
  async putRender(input: RenderInput, options: PutRenderOptions = {}): Promise<RenderKey> {
    this.checkOpen();
    if (input === null || typeof input !== 'object')
      throw new InvalidArgumentError(`putRender needs a render { title, rev, tid?, value, headers?, parts? }, got ${input === null ? 'null' : typeof input}`);
    const title = checkTitle(input.title);
    const rev = checkRev(input.rev);
    const tid = input.tid === undefined ? this.tids.next() : checkTid(input.tid);
    const content = checkContent(input.value, input.headers, input.parts);
    const ifAbsent = options?.ifAbsent === true;
    await this.writer.write({ title, rev, tid, position: positionOf(rev, tid), ifAbsent }, encodeRender(content, 0));
    return { title, rev, tid };
  }

  /**
   * Stores many renders, as `putRender` of each in the order given would, in far fewer round trips
   * (an import): the renders of one page go in atomic updates of as many as the batch limits allow,
   * each with one cull and one supersession entry; pages are written at once, PAGES_AT_ONCE at a time.
   * Every render is checked before anything is written. Resolves the renders' keys, in order.
   * @throws RenderExistsError with `ifAbsent` for a render already stored: nothing of its update is
   *   written (renders of the same page given before it may be, and other pages' are).
   * @throws InvalidArgumentError for a bad render (`renders[i]` named); nothing is written.
   */
  async putRenders(renders: RenderInput[], options: PutRenderOptions = {}): Promise<RenderKey[]> {
    this.checkOpen();
    if (!Array.isArray(renders)) throw new InvalidArgumentError(`putRenders needs an array of renders, got ${renders === null ? 'null' : typeof renders}`);
    const ifAbsent = options?.ifAbsent === true;
    const pages = new Map<string, { target: RenderTarget; encoded: EncodedRender }[]>();
    const keys = renders.map((input, i): RenderKey => {
      try {
        if (input === null || typeof input !== 'object')
          throw new InvalidArgumentError(`a render must be { title, rev, tid?, value, headers?, parts? }, got ${input === null ? 'null' : typeof input}`);
        const title = checkTitle(input.title);
        const rev = checkRev(input.rev);
        const tid = input.tid === undefined ? this.tids.next() : checkTid(input.tid);
        const encoded = encodeRender(checkContent(input.value, input.headers, input.parts), 0);
        const page = pages.get(title) ?? pages.set(title, []).get(title)!;
        page.push({ target: { title, rev, tid, position: positionOf(rev, tid), ifAbsent }, encoded });
        return { title, rev, tid };
      } catch (err) {
        if (err instanceof InvalidArgumentError) throw new InvalidArgumentError(`renders[${i}]: ${err.message}`, { cause: err });
        throw err;
      }
    });
    const queue = [...pages];
    const failures: unknown[] = [];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next && failures.length === 0; next = queue.shift()) {
        await this.writer.writeAll(next[0], next[1]).catch((err: unknown) => failures.push(err));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PAGES_AT_ONCE, queue.length) }, worker));
    if (failures.length > 0) throw failures[0];
    return keys;
  }

  /** The latest render of the latest revision of a page, or null when it has none. */
  async getLatest(title: string, options?: ReadRenderOptions): Promise<Render | null> {
    this.checkOpen();
    checkTitle(title);
    const bytes = checkReadOptions(options);
    return this.reader.read(title, async () => this.reader.firstLive(title, await this.reader.firstPage(title, { prefix: Buffer.of(KIND.RENDER), maxKeysAtOnce: 1 }), bytes));
  }

  /**
   * The latest render of a revision: from the hot renders, else from the historical ones, else made
   * by the `render` callback (stored for `historicalTtlMs`); null when none of them has it.
   */
  async getRevision(title: string, rev: number, options?: ReadRenderOptions): Promise<Render | null> {
    this.checkOpen();
    checkTitle(title);
    checkRev(rev);
    const bytes = checkReadOptions(options);
    const found = await this.reader.read(title, async () => {
      const hot = await this.reader.firstPage(title, { prefix: revisionPrefix(KIND.RENDER, rev), maxKeysAtOnce: 1 });
      if (hot.length > 0) return this.reader.decode(title, hot[0], bytes);
      return this.reader.firstLive(title, await this.reader.firstPage(title, { prefix: revisionPrefix(KIND.HISTORICAL, rev), maxKeysAtOnce: 16 }), bytes);
    });
    if (found) return found;
    const archived = await this.options.archive?.get(title, rev);
    return readAs(archived ? fromArchive(archived) : this.options.render ? await this.renderMissing(title, rev) : null, bytes);
  }

  /** One render, exactly (hot or historical); null when absent. Never calls `render`. */
  async getRender(title: string, rev: number, tid: string, options?: ReadRenderOptions): Promise<Render | null> {
    this.checkOpen();
    checkTitle(title);
    checkRev(rev);
    const position = positionOf(rev, checkTid(tid));
    const bytes = checkReadOptions(options);
    const found = await this.reader.read(title, async () => {
      const entries = await this.table.getAll(title, [recordKey(KIND.RENDER, position), recordKey(KIND.HISTORICAL, position)]);
      return this.reader.firstLive(
        title,
        entries.filter((e) => e !== null),
        bytes,
      );
    });
    if (found || !this.options.archive) return found;
    const archived = await this.options.archive.get(title, rev, tid);
    return readAs(archived ? fromArchive(archived) : null, bytes);
  }

  /**
   * Moves a page's history to the archive: every render but the latest is appended to the archive
   * and then removed from the hot table (reads find it in the archive from then on). Without
   * `title`, every page of the table. Needs the `archive` option.
   * @throws InvalidArgumentError when the store has no archive.
   */
  async archiveHistory(title?: string): Promise<MovedHistory & { pages: number }> {
    this.checkOpen();
    if (!this.archiver) throw new InvalidArgumentError('archiveHistory needs a PageRevisionStore with an archive (the archive option)');
    const titles = title === undefined ? this.titles() : [checkTitle(title)];
    const total = { pages: 0, moved: 0, skipped: 0 };
    for await (const t of titles) {
      const moved = await this.archiver.moveHistory(t);
      total.pages++;
      total.moved += moved.moved;
      total.skipped += moved.skipped;
    }
    return total;
  }

  /**
   * A page of the page's revisions, newest first: the latest render of each revision (every render
   * with `allRenders`). `nextPageToken` resumes right after the page's last item, even when renders
   * were added meanwhile (new ones sort before it). Hot renders only.
   * @throws InvalidArgumentError for a bad limit, or a page token that is malformed, altered, of
   *   another page or listing, or signed with another `tokenSecret`.
   */
  async listRevisions(title: string, options: ListRevisionsOptions = {}): Promise<RevisionPage> {
    this.checkOpen();
    checkTitle(title);
    const limit = checkLimit(options?.limit);
    const mode: ListMode = options?.allRenders === true ? 'all' : 'latest';
    const from = options?.pageToken === undefined ? Buffer.of(KIND.RENDER) : this.tokens.verify(title, mode, options.pageToken);
    if (from[0] !== KIND.RENDER) throw new InvalidArgumentError('pageToken is malformed: it does not point at a render');
    const keys = await this.listedKeys(title, mode, from, limit + 1);
    const entries = await this.table.getAll(title, keys.slice(0, limit));
    const items: Render[] = [];
    for (let i = 0; i < entries.length; i++) {
      // Culled between the two reads: gone.
      const render = entries[i] ? await this.listedRender(title, keys[i], entries[i]!) : null;
      if (render) items.push(render);
    }
    if (keys.length <= limit) return { items };
    const last = keys[limit - 1];
    const cursor = mode === 'all' ? after(last) : after(revisionPrefix(KIND.RENDER, readPosition(last, 1).rev));
    return { items, nextPageToken: this.tokens.sign(title, mode, cursor) };
  }

  /**
   * The title of every page with hot renders, each once (a scan of the whole table, for export and
   * audits; pages written meanwhile may be missed).
   */
  async *titles(): AsyncGenerator<string> {
    this.checkOpen();
    let last: string | null = null;
    for await (const page of this.table.scanEntries({ maxKeysAtOnce: 1000 })) {
      for (const entry of page.items) {
        if (entry.family === null || entry.family === last || entry.key[0] !== KIND.RENDER) continue;
        last = entry.family;
        yield entry.family;
      }
    }
  }

  /** Marks the store closed (the table stays open: it is the caller's). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private checkOpen(): void {
    if (this.closed) throw new ObjectClosedError('the PageRevisionStore is closed');
  }

  /** The keys a listing returns from `from` on, at most `count`. */
  private async listedKeys(title: string, mode: ListMode, from: Buffer, count: number): Promise<Buffer[]> {
    const keys: Buffer[] = [];
    let lastRev = -1;
    const pageSize = mode === 'all' ? count : Math.min(LIST_SCAN_PAGE, count);
    for await (const page of this.table.keyIterator(title, { prefix: Buffer.of(KIND.RENDER), from, maxKeysAtOnce: pageSize })) {
      for (const { key } of page.items) {
        const rev = readPosition(key, 1).rev;
        if (mode === 'latest' && rev === lastRev) continue;
        lastRev = rev;
        keys.push(Buffer.from(key));
        if (keys.length >= count) return keys;
      }
    }
    return keys;
  }

  /** Decodes a listed entry; when its chunks changed under the read, reads its key again. */
  private listedRender(title: string, key: Buffer, entry: RawEntry): Promise<Render | null> {
    let current: RawEntry | null = entry;
    return this.reader.read(title, async () => {
      const e = current ?? (await this.table.get(title, key));
      current = null;
      return e ? this.reader.decode(title, e) : null;
    });
  }

  /** Asks `render` for a revision found nowhere (once for concurrent misses) and stores the result. */
  private renderMissing(title: string, rev: number): Promise<Render | null> {
    const id = `${rev}\u0000${title}`;
    let pending = this.rendering.get(id);
    if (!pending) {
      pending = this.renderAndStore(title, rev).finally(() => this.rendering.delete(id));
      this.rendering.set(id, pending);
    }
    return pending;
  }

  private async renderAndStore(title: string, rev: number): Promise<Render | null> {
    const made: RenderedRevision | null | undefined = await this.options.render!(title, rev);
    if (made === null || made === undefined) return null;
    if (typeof made !== 'object') throw new InvalidArgumentError(`render returned ${typeof made}; it must return { value, headers?, parts?, tid? } or null`);
    const tid = made.tid === undefined ? this.tids.next() : checkTid(made.tid);
    const content = checkContent(made.value, made.headers, made.parts);
    const ttl = this.options.historicalTtlMs;
    const target = { title, rev, tid, position: positionOf(rev, tid), historicalTtlMs: ttl, ifAbsent: false };
    await this.writer.write(target, encodeRender(content, this.options.clock() + ttl));
    const [value, ...parts] = content.bodies.map((b) => bodyOf(b.bytes, b.text));
    return { title, rev, tid, value, headers: content.headers, parts: Object.fromEntries(content.bodies.slice(1).map((b, i) => [b.name, parts[i]])) };
  }
}
