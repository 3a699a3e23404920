/**
 * The archive's rules over any {@link ArchiveBackend}: grouping renders into blocks, sealing a block
 * at its count or size, images of open blocks on flush, dedupe, reads through a cache of sealed
 * blocks, and the checks that turn damage into {@link ArchiveCorruptedError}. The public stores
 * (KvtArchiveStore, CassandraArchiveStore) are this class over their backend.
 *
 * Every change of a page is one compare-and-set of its metadata together with the entries it
 * describes: an append (index entries + pending records), an image, a seal. A handle serialises its
 * own work on a page; other handles and processes are kept apart by the compare-and-set, retried
 * after a short random backoff when it loses.
 */
import { InvalidArgumentError, ObjectClosedError, UnavailableError } from '../errors';
import type { ArchiveBackend, AppendEntry, IndexHit, PageSnapshot, PageState, StoredContent } from './archive-backend';
import { ArchiveCorruptedError } from './archive-errors';
import type { ArchiveAppendResult, ArchivedRender, ArchivedRenderRead, ArchiveLocation, ArchiveStats, ArchiveStore, ArchiveStoreOptions } from './archive-store';
import { BlockCache, DecodedBlock } from './block-cache';
import { CompressionSettings, decodeBlock, decodePending, encodeBlock, encodePending } from './block-codec';
import { decodeRecord, EncodedRecord, indexRecords, joinRecords, recordId, revisionId } from './record-codec';
import { checkRender, checkRev, checkTid, checkTitle, resolveArchiveOptions } from './render-validation';

/** Renders and bytes of one compare-and-set at most (within a kvt batch's 256 items and 16 MiB). */
const MAX_COMMIT_RENDERS = 64;
const MAX_COMMIT_BYTES = 8 * 1024 * 1024;
/** Lost compare-and-sets on one page before an operation gives up. */
const MAX_ATTEMPTS = 500;
/** Reads retried when the render moved (sealed, imaged) between the lookup and the read. */
const READ_ATTEMPTS = 3;

/** Runs `work` on each item, at most `limit` at once; resolves in input order. */
async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The archive over a backend; see the module comment and {@link ArchiveStore}. */
export class BlockArchive implements ArchiveStore {
  private readonly options: Required<ArchiveStoreOptions>;
  private readonly compression: CompressionSettings;
  private readonly cache: BlockCache;
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Pages this handle appended to since its last flush. */
  private readonly touched = new Set<string>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly backend: ArchiveBackend,
    options: ArchiveStoreOptions | undefined,
    private readonly label: string,
  ) {
    this.options = resolveArchiveOptions(options);
    this.compression = { quality: this.options.quality, windowBits: this.options.windowBits };
    this.cache = new BlockCache(this.options.cacheBytes);
  }

  private checkOpen(): void {
    if (this.closing) throw new ObjectClosedError(`${this.label} is closed`);
  }

  /** Runs `work` after every earlier operation of this handle on `title`. */
  private withLock<R>(title: string, work: () => Promise<R>): Promise<R> {
    const before = this.locks.get(title) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.catch(() => undefined);
    this.locks.set(title, tail);
    void tail.then(() => {
      if (this.locks.get(title) === tail) this.locks.delete(title);
    });
    return run;
  }

  private async backoff(attempt: number, title: string, what: string): Promise<void> {
    if (attempt >= MAX_ATTEMPTS) throw new UnavailableError(`${what} of page ${JSON.stringify(title)} lost ${attempt} compare-and-sets in a row to other writers; try again`);
    const ms = Math.random() * Math.min(50, 2 ** Math.min(attempt, 6));
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  async append(renders: Iterable<ArchivedRender>): Promise<ArchiveAppendResult> {
    this.checkOpen();
    if (renders === null || typeof (renders as Iterable<ArchivedRender>)?.[Symbol.iterator] !== 'function') throw new InvalidArgumentError('renders must be an iterable of renders');
    const byPage = new Map<string, EncodedRecord[]>();
    let index = 0;
    for (const render of renders) {
      const record = checkRender(render, index++);
      const list = byPage.get(render.title) ?? [];
      list.push(record);
      byPage.set(render.title, list);
    }
    const results = await mapLimited([...byPage], this.options.concurrency, ([title, records]) => this.withLock(title, () => this.appendPage(title, records)));
    return results.reduce((a, b) => ({ appended: a.appended + b.appended, alreadyArchived: a.alreadyArchived + b.alreadyArchived }), { appended: 0, alreadyArchived: 0 });
  }

  /**
   * The renders of `remaining` that go into the open block next: within its room, its size and one
   * commit's limits. Empty when the first would take a non-empty block over `blockBytes`.
   */
  private takeBatch(state: PageState, remaining: EncodedRecord[]): EncodedRecord[] {
    const room = Math.min(MAX_COMMIT_RENDERS, this.options.blockRevisions - state.openRevisions);
    let raw = state.openRawBytes;
    let bytes = 0;
    const batch: EncodedRecord[] = [];
    for (const record of remaining) {
      if (batch.length >= room || (batch.length > 0 && bytes + record.bytes.length > MAX_COMMIT_BYTES)) break;
      if (state.openRevisions + batch.length > 0 && raw + record.rawBytes > this.options.blockBytes) break;
      batch.push(record);
      bytes += record.bytes.length;
      raw += record.rawBytes;
      if (raw >= this.options.blockBytes) break;
    }
    return batch;
  }

  private afterAppend(state: PageState, entries: AppendEntry[]): PageState {
    const sizes = this.backend.sizes;
    const raw = entries.reduce((n, e) => n + e.record.rawBytes, 0);
    const next: PageState = { ...state };
    next.openRevisions += entries.length;
    next.openRawBytes += raw;
    next.revisions += entries.length;
    next.rawBytes += raw;
    next.pendingBytes += entries.reduce((n, e) => n + sizes.pendingEntry(e.pending.length), 0);
    next.indexBytes += entries.length * sizes.indexEntry(state.openBlock);
    next.full = next.openRevisions >= this.options.blockRevisions || next.openRawBytes >= this.options.blockBytes;
    return next;
  }

  private async appendPage(title: string, records: EncodedRecord[]): Promise<ArchiveAppendResult> {
    const unique = new Map<string, EncodedRecord>();
    for (const r of records) if (!unique.has(r.id)) unique.set(r.id, r);
    let remaining = [...unique.values()];
    let alreadyArchived = records.length - remaining.length;
    let appended = 0;
    let filled = false;
    for (let attempt = 0; remaining.length > 0;) {
      const snap = await this.backend.readState(title);
      if (snap.state.full) {
        await this.sealPage(title);
        continue;
      }
      const present = await this.backend.existing(title, remaining);
      if (present.size > 0) {
        alreadyArchived += remaining.filter((r) => present.has(r.id)).length;
        remaining = remaining.filter((r) => !present.has(r.id));
        if (remaining.length === 0) break;
      }
      const entries = this.takeBatch(snap.state, remaining).map((record) => ({ record, pending: encodePending(record.bytes) }));
      if (entries.length === 0) {
        // The next render does not fit the open block: mark it full (so that its content is fixed before
        // anyone compresses it), seal it on the next turn; the render opens the next block.
        if (!(await this.backend.commitAppend(title, snap, { ...snap.state, full: true }, snap.state.openBlock, []))) await this.backoff(++attempt, title, 'an append');
        continue;
      }
      const next = this.afterAppend(snap.state, entries);
      if (await this.backend.commitAppend(title, snap, next, snap.state.openBlock, entries)) {
        this.touched.add(title);
        appended += entries.length;
        remaining = remaining.slice(entries.length);
        filled = next.full;
        attempt = 0;
      } else await this.backoff(++attempt, title, 'an append');
    }
    // A block this call filled is sealed before it returns, so a caller sees blocks sealed at their count.
    if (filled) await this.sealPage(title);
    return { appended, alreadyArchived };
  }

  /** The payload (sorted records) of an open block from its image and pending records; checks the count against the state. */
  private async openPayload(title: string, snap: PageSnapshot): Promise<Buffer | null> {
    const { state } = snap;
    const block = state.openBlock;
    const open = await this.backend.readOpen(title, block);
    const records: { bytes: Buffer }[] = [];
    const ids = new Set<string>();
    if (open.image) {
      const { payload } = await decodeBlock(title, block, 'image', open.image);
      for (const span of this.spansOf(title, block, payload).values()) records.push({ bytes: payload.subarray(span.start, span.end) });
    }
    for (const stored of open.pending) records.push({ bytes: decodePending(title, block, stored) });
    for (const r of records) ids.add(recordId(r.bytes));
    if (ids.size !== records.length || records.length !== state.openRevisions) {
      // A read that raced another writer (the backend's reads are not one snapshot) is retried by the caller;
      // a mismatch while the page stays unchanged is damage.
      const again = await this.backend.readState(title);
      if (again.token !== snap.token) return null;
      throw new ArchiveCorruptedError(title, block, `the open block holds ${ids.size} distinct renders; the page's metadata says ${state.openRevisions}`);
    }
    return joinRecords(records);
  }

  private spansOf(title: string, block: number, payload: Buffer): Map<string, { start: number; end: number }> {
    try {
      return indexRecords(payload);
    } catch (err) {
      throw new ArchiveCorruptedError(title, block, (err as Error).message, { cause: err });
    }
  }

  /**
   * Seals the open block if it is full; retried until it is sealed (by this handle or another). Only a
   * full block is sealed: its renders are then fixed, so every handle that compresses it compresses
   * the same renders, and a backend that writes the block before its compare-and-set (Cassandra)
   * never writes a block that lacks one.
   */
  private async sealPage(title: string): Promise<void> {
    for (let attempt = 0; ;) {
      const snap = await this.backend.readState(title);
      if (!snap.state.full) return;
      if (await this.sealOnce(title, snap)) return;
      await this.backoff(++attempt, title, 'a seal');
    }
  }

  private async sealOnce(title: string, snap: PageSnapshot): Promise<boolean> {
    const { state } = snap;
    const block = state.openBlock;
    const payload = await this.openPayload(title, snap);
    if (!payload) return false;
    const sealed = await encodeBlock('sealed', block, state.openRevisions, payload, this.compression);
    const next: PageState = {
      ...state,
      openBlock: block + 1,
      openRevisions: 0,
      openRawBytes: 0,
      full: false,
      imageRevisions: 0,
      imageBytes: 0,
      pendingBytes: 0,
      sealedBlocks: state.sealedBlocks + 1,
      sealedBytes: state.sealedBytes + this.backend.sizes.block(sealed.length),
    };
    if (!(await this.backend.commitSeal(title, snap, next, block, sealed))) return false;
    this.cache.set(title, block, { payload, spans: this.spansOf(title, block, payload) });
    return true;
  }

  /** Compresses the open block's pending records into its image (sealing first if it is full). */
  private async imagePage(title: string): Promise<void> {
    for (let attempt = 0; ;) {
      const snap = await this.backend.readState(title);
      if (snap.state.full) {
        await this.sealPage(title);
        continue;
      }
      const { state } = snap;
      if (state.openRevisions === state.imageRevisions) return;
      const payload = await this.openPayload(title, snap);
      if (payload) {
        const image = await encodeBlock('image', state.openBlock, state.openRevisions, payload, this.compression);
        const next: PageState = { ...state, imageRevisions: state.openRevisions, imageBytes: this.backend.sizes.block(image.length), pendingBytes: 0 };
        if (await this.backend.commitImage(title, snap, next, state.openBlock, image)) return;
      }
      await this.backoff(++attempt, title, 'an image');
    }
  }

  async flush(): Promise<void> {
    this.checkOpen();
    await this.flushTouched();
  }

  private async flushTouched(): Promise<void> {
    const titles = [...this.touched];
    this.touched.clear();
    await mapLimited(titles, this.options.concurrency, (title) => this.withLock(title, () => this.imagePage(title)));
  }

  async locate(title: string, rev: number, tid?: string): Promise<ArchiveLocation | null> {
    this.checkOpen();
    this.checkRead(title, rev, tid);
    const hit = await this.backend.lookup(title, rev, tid);
    if (!hit) return null;
    const sealed = hit.sealed ?? (await this.backend.readState(title)).state.openBlock > hit.block;
    return { title, rev: hit.rev, tid: hit.tid, block: hit.block, sealed };
  }

  private checkRead(title: string, rev: number, tid?: string): void {
    checkTitle(title);
    checkRev(rev);
    if (tid !== undefined) checkTid(tid);
  }

  async get(title: string, rev: number, tid?: string): Promise<ArchivedRenderRead | null> {
    this.checkOpen();
    this.checkRead(title, rev, tid);
    let hit: IndexHit | null = null;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      hit = await this.backend.lookup(title, rev, tid);
      if (!hit) return null;
      const cached = this.cache.get(title, hit.block);
      if (cached) return this.fromBlock(title, hit, cached);
      const content = hit.pending ? { kind: 'pending' as const, stored: hit.pending } : await this.backend.readContent(title, hit);
      if (!content) continue;
      try {
        const render = await this.fromContent(title, hit, content);
        if (render) return render;
      } catch (err) {
        // An image or pending record can be replaced while it is read (its chunks then disagree): read again.
        // A sealed block never changes, so its damage is reported at once.
        if (!(err instanceof ArchiveCorruptedError) || content.kind === 'sealed' || attempt === READ_ATTEMPTS - 1) throw err;
      }
    }
    throw new ArchiveCorruptedError(title, hit!.block, `the index holds rev ${hit!.rev} tid ${hit!.tid}, but neither the block, its image nor a pending record does`);
  }

  private fromBlock(title: string, hit: IndexHit, decoded: DecodedBlock): ArchivedRenderRead {
    const span = decoded.spans.get(revisionId(hit.rev, hit.tid));
    if (!span) throw new ArchiveCorruptedError(title, hit.block, `the index holds rev ${hit.rev} tid ${hit.tid}, but the block does not`);
    try {
      return decodeRecord(title, decoded.payload, span);
    } catch (err) {
      throw new ArchiveCorruptedError(title, hit.block, (err as Error).message, { cause: err });
    }
  }

  /** The render from what holds it; null when an image read does not hold it (it was pending when the image was made: read again). */
  private async fromContent(title: string, hit: IndexHit, content: StoredContent): Promise<ArchivedRenderRead | null> {
    if (content.kind === 'pending') {
      const record = decodePending(title, hit.block, content.stored);
      return this.fromBlock(title, hit, { payload: record, spans: this.spansOf(title, hit.block, record) });
    }
    // An image is cached under its checksum and length (header bytes 18–25), so a replaced image is another entry.
    const tag = content.kind === 'sealed' ? 'sealed' : `image ${content.stored.subarray(18, 26).toString('hex')}`;
    let decoded = this.cache.get(title, hit.block, tag);
    if (!decoded) {
      const { payload } = await decodeBlock(title, hit.block, content.kind, content.stored);
      decoded = { payload, spans: this.spansOf(title, hit.block, payload) };
      this.cache.set(title, hit.block, decoded, tag);
    }
    if (content.kind === 'image' && !decoded.spans.has(revisionId(hit.rev, hit.tid))) return null;
    return this.fromBlock(title, hit, decoded);
  }

  async stats(title?: string): Promise<ArchiveStats> {
    this.checkOpen();
    const total: ArchiveStats = { pages: 0, revisions: 0, rawBytes: 0, storedBytes: 0, blocks: 0, sealedBlocks: 0, pendingRevisions: 0 };
    const add = (page: string, s: PageState): void => {
      if (s.revisions === 0) return;
      total.pages++;
      total.revisions += s.revisions;
      total.rawBytes += s.rawBytes;
      total.storedBytes += s.sealedBytes + s.imageBytes + s.pendingBytes + s.indexBytes + this.backend.sizes.page(page, s);
      total.blocks += s.sealedBlocks + (s.openRevisions > 0 ? 1 : 0);
      total.sealedBlocks += s.sealedBlocks;
      total.pendingRevisions += s.openRevisions - s.imageRevisions;
    };
    if (title !== undefined) add(checkTitle(title), (await this.backend.readState(title)).state);
    else for await (const page of this.backend.pages()) add(page.title, page.state);
    return total;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await Promise.all([...this.locks.values()]);
        if (this.options.flushOnClose) await this.flushTouched();
      } finally {
        this.cache.clear();
        await this.backend.close();
      }
    })();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
