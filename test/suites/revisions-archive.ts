/**
 * PageRevisionStore with an archive tier (issue 32): a cull appends what it removes to the archive
 * first and removes it only once the archive acknowledged it; reads fall through hot → archive →
 * render callback; a page's whole history moves to the archive on demand. The archive is a
 * KvtArchiveStore on a second table of the same target.
 */
import { describe, expect, it } from 'vitest';
import { ArchiveStore, DEFAULT_RECENCY_WINDOW_MS, KvtArchiveStore, PageRevisionStore } from '../../client';
import { KIND, readPosition } from '../../client/revisions/key-layout';
import { BytesTable, bytes, FakeClock, keysOfKind, RevisionsSuiteContext, summary, text, tidAt, T0 } from './revisions-context';

const W = DEFAULT_RECENCY_WINDOW_MS;

async function hotRevs(table: BytesTable, title: string): Promise<number[]> {
  return (await keysOfKind(table, title, KIND.RENDER)).map((k) => readPosition(k, 1).rev);
}

/** An archive whose appends fail while `failing` is set (a backend that is down), over a real one. */
class Unreachable implements ArchiveStore {
  failing = true;
  appendCalls = 0;
  constructor(private readonly inner: ArchiveStore) {}
  async append(renders: Parameters<ArchiveStore['append']>[0]) {
    this.appendCalls++;
    if (this.failing) throw new Error('archive unreachable');
    return this.inner.append(renders);
  }
  get(title: string, rev: number, tid?: string) {
    return this.inner.get(title, rev, tid);
  }
  locate(title: string, rev: number, tid?: string) {
    return this.inner.locate(title, rev, tid);
  }
  stats(title?: string) {
    return this.inner.stats(title);
  }
  flush() {
    return this.inner.flush();
  }
  close() {
    return this.inner.close();
  }
  [Symbol.asyncDispose]() {
    return this.inner[Symbol.asyncDispose]();
  }
}

/** Renders of revisions 1..n of `title`, 60 KB of text with a bytes part each, one hour apart from T0. */
function history(title: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({
    title,
    rev: i + 1,
    tid: tidAt(T0 + i * 3_600_000),
    value: text(60_000, i + 1),
    headers: { 'content-type': 'text/html', etag: `"${i + 1}"` },
    parts: { 'data-parsoid': bytes(2_000 + i) },
  }));
}

export function archiveSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore with an archive', () => {
    async function withArchive(wrap?: (a: ArchiveStore) => ArchiveStore) {
      const archiveTable = await ctx.target().table();
      const inner = new KvtArchiveStore(archiveTable, { blockRevisions: 4 });
      const archive = wrap ? wrap(inner) : inner;
      const { store, table, clock } = await ctx.store({ archive });
      return { store, table, clock, archive };
    }

    it('archives what a cull removes, and reads culled revisions back from the archive byte for byte', async () => {
      const { store, table, clock, archive } = await withArchive();
      const renders = history('Archived_Page', 6);
      for (const r of renders.slice(0, 5)) await store.putRender(r);
      clock.advance(W + 1);
      await store.putRender(renders[5]);
      // Revisions 1–4 were superseded a window ago (by 2–5): culled from the hot family, archived.
      expect(await hotRevs(table, 'Archived_Page')).toEqual([6, 5]);
      expect((await archive.stats('Archived_Page')).revisions).toBe(4);
      for (const r of renders.slice(0, 4)) {
        expect(summary(await store.getRevision(r.title, r.rev))).toEqual(summary(r));
        expect(summary(await store.getRender(r.title, r.rev, r.tid))).toEqual(summary(r));
      }
      expect(summary(await store.getLatest('Archived_Page'))).toEqual(summary(renders[5]));
    });

    it('skips a cull while the archive refuses, so nothing is removed that the archive does not hold', async () => {
      let down: Unreachable | undefined;
      const { store, table, clock, archive } = await withArchive((a) => (down = new Unreachable(a)));
      const renders = history('Flaky_Archive', 4);
      for (const r of renders.slice(0, 3)) await store.putRender(r);
      clock.advance(W + 1);
      await store.putRender(renders[3]);
      expect(down!.appendCalls).toBeGreaterThan(0);
      expect(await hotRevs(table, 'Flaky_Archive')).toEqual([4, 3, 2, 1]);
      expect(summary(await store.getRevision('Flaky_Archive', 1))).toEqual(summary(renders[0]));
      down!.failing = false;
      await store.putRender({ title: 'Flaky_Archive', rev: 5, tid: tidAt(T0 + W + 10), value: 'five' });
      expect(await hotRevs(table, 'Flaky_Archive')).toEqual([5, 4, 3]);
      expect((await archive.stats('Flaky_Archive')).revisions).toBe(2);
      expect(summary(await store.getRevision('Flaky_Archive', 1))).toEqual(summary(renders[0]));
      expect(summary(await store.getRevision('Flaky_Archive', 2))).toEqual(summary(renders[1]));
    });

    it('moves a page’s whole history to the archive on demand, keeping the latest hot', async () => {
      const { store, table, archive } = await withArchive();
      const renders = history('Moved_Page', 7);
      for (const r of renders) await store.putRender(r);
      await store.putRender({ title: 'Other_Page', rev: 1, value: 'one' });
      await store.putRender({ title: 'Other_Page', rev: 2, value: 'two' });
      expect(await store.archiveHistory('Moved_Page')).toEqual({ pages: 1, moved: 6, skipped: 0 });
      expect(await hotRevs(table, 'Moved_Page')).toEqual([7]);
      expect(await hotRevs(table, 'Other_Page')).toEqual([2, 1]);
      for (const r of renders) expect(summary(await store.getRender(r.title, r.rev, r.tid))).toEqual(summary(r));
      // The whole table: the other page's history moves too; moving again finds nothing left.
      expect(await store.archiveHistory()).toEqual({ pages: 2, moved: 1, skipped: 0 });
      expect(await store.archiveHistory()).toEqual({ pages: 2, moved: 0, skipped: 0 });
      expect((await archive.stats()).revisions).toBe(7);
      expect((await store.getRevision('Other_Page', 1))?.value).toBe('one');
    });

    it('reads the archive before asking the render callback, and asks it only for what neither has', async () => {
      const asked: number[] = [];
      const archiveTable = await ctx.target().table();
      const archive = new KvtArchiveStore(archiveTable);
      const clock = new FakeClock();
      const table = await ctx.target().table();
      const store = new PageRevisionStore(table, { clock: clock.read, archive, render: async (_title, rev) => (asked.push(rev), { value: `rendered ${rev}` }) });
      await archive.append([{ title: 'Old_Page', rev: 3, tid: tidAt(T0), value: 'from the archive' }]);
      expect((await store.getRevision('Old_Page', 3))?.value).toBe('from the archive');
      expect((await store.getRevision('Old_Page', 3, { bytes: true }))?.value).toEqual(Buffer.from('from the archive'));
      expect((await store.getRender('Old_Page', 3, tidAt(T0), { bytes: true }))?.value).toEqual(Buffer.from('from the archive'));
      expect((await store.getRevision('Old_Page', 4))?.value).toBe('rendered 4');
      expect((await store.getRevision('Old_Page', 5, { bytes: true }))?.value).toEqual(Buffer.from('rendered 5'));
      expect(asked).toEqual([4, 5]);
    });

    it('refuses archiveHistory without an archive, naming the option', async () => {
      const { store } = await ctx.store();
      await expect(store.archiveHistory('Any_Page')).rejects.toThrow('archiveHistory needs a PageRevisionStore with an archive (the archive option)');
    });
  });
}
