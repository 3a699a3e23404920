/** Archive conformance: what goes in comes out, exactly; nothing is replaced; bad input writes nothing. */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, ObjectClosedError } from '../../client';
import type { ArchivedRender } from '../../client';
import { ArchiveSuiteContext, expectAllReadBack, expected, readSharedData, rejection, renderOf, renders, timeUuid } from './archive-context';

export function roundTripConformance(ctx: ArchiveSuiteContext): void {
  describe('ArchiveStore round trip', () => {
    it('keeps every revision of the shared data byte for byte, compressed to a few percent', async () => {
      const data = await readSharedData();
      const all = data.map((r) => renderOf(r));
      const space = await ctx.target().space();
      const writer = space.open();
      for (let i = 0; i < all.length; i += 100) await writer.append(all.slice(i, i + 100));
      await writer.close();
      const reader = space.open();
      const stats = await reader.stats();
      const raw = all.reduce((n, r) => n + Buffer.byteLength(r.value as string) + JSON.stringify(r.headers).length, 0);
      expect(stats).toMatchObject({ pages: new Set(data.map((r) => r.page)).size, revisions: all.length, rawBytes: raw, pendingRevisions: 0 });
      // Blocks of 128 revisions compressed together: a few percent of raw (the benchmark reports the figure).
      expect(stats.storedBytes / stats.rawBytes).toBeLessThan(0.03);
      await expectAllReadBack(reader, all);
      await reader.close();
    }, 600_000);

    it('reads each render by (title, rev, tid) and the latest render of a rev by (title, rev)', async () => {
      const space = await ctx.target().space();
      const store = space.open({ blockRevisions: 4 });
      const base = renders('Tids', 3);
      const rerenders = base.map((r, i) => ({ ...r, tid: timeUuid(1_800_000_000_000 + i, 0, 'later'), value: `${r.value} (re-rendered)` }));
      await store.append([...rerenders, ...base]);
      for (const [r, newer] of base.map((b, i) => [b, rerenders[i]])) {
        expect(await store.get(r.title, r.rev, r.tid)).toEqual(expected(r));
        expect(await store.get(r.title, r.rev, newer.tid)).toEqual(expected(newer));
        expect(await store.get(r.title, r.rev)).toEqual(expected(newer));
      }
      expect(await store.get('Tids', 99)).toBeNull();
      expect(await store.get('Tids', 1, timeUuid(1, 0, 'absent'))).toBeNull();
      expect(await store.get('No page', 1)).toBeNull();
      expect(await store.locate('No page', 1)).toBeNull();
      await store.close();
    });

    it('keeps text and bytes apart, with headers and named parts', async () => {
      const space = await ctx.target().space();
      const store = space.open();
      const bytes = new Uint8Array([0, 1, 2, 250, 255, 0x80]);
      const render: ArchivedRender = {
        title: 'Mixed/ünïcode ✓',
        rev: Number.MAX_SAFE_INTEGER,
        tid: timeUuid(1_700_000_000_000).toUpperCase(),
        value: bytes,
        headers: { 'content-type': 'application/octet-stream', etag: 'W/"1"' },
        parts: { 'data-parsoid': '{"ids":{}}', binary: new Uint8Array([9, 8, 7]), empty: '' },
      };
      const text: ArchivedRender = { title: 'Mixed/ünïcode ✓', rev: 0, tid: timeUuid(1_600_000_000_000), value: '' };
      expect(await store.append([render, text])).toEqual({ appended: 2, alreadyArchived: 0 });
      const got = await store.get(render.title, render.rev);
      expect(got).toEqual(expected(render));
      expect(got!.value).toBeInstanceOf(Uint8Array);
      expect(typeof got!.parts['data-parsoid']).toBe('string');
      expect(await store.get(text.title, 0, text.tid)).toEqual({ ...text, headers: {}, parts: {} });
      await store.close();
    });

    it('never replaces an archived (title, rev, tid): a second append of it is skipped', async () => {
      const space = await ctx.target().space();
      const store = space.open({ blockRevisions: 2 });
      const [first, second, third] = renders('Once', 3);
      expect(await store.append([first, second, { ...first, value: 'changed in the same call' }])).toEqual({ appended: 2, alreadyArchived: 1 });
      expect(await store.append([{ ...first, value: 'changed later' }, third, { ...second, headers: { x: 'y' } }])).toEqual({ appended: 1, alreadyArchived: 2 });
      expect(await store.get(first.title, first.rev, first.tid)).toEqual(expected(first));
      expect(await store.get(second.title, second.rev, second.tid)).toEqual(expected(second));
      expect((await store.stats()).revisions).toBe(3);
      await store.close();
    });

    it('rejects a bad render before anything of the call is written', async () => {
      const space = await ctx.target().space();
      const store = space.open();
      const good = renders('Checked', 2);
      const cases: [ArchivedRender, string][] = [
        [{ ...good[0], rev: -1 }, 'renders[2].rev is -1; it must be an integer from 0 to 9007199254740991'],
        [{ ...good[0], rev: 1.5 }, 'renders[2].rev is 1.5; it must be an integer from 0 to 9007199254740991'],
        [{ ...good[0], tid: '5f0c7d2e-0000-4000-8000-000000000000' }, 'renders[2].tid is "5f0c7d2e-0000-4000-8000-000000000000"; it must be a time-based (version 1) UUID'],
        [{ ...good[0], title: '' }, 'renders[2].title must be a non-empty string, got an empty string'],
        [{ ...good[0], title: 'x'.repeat(2049) }, 'renders[2].title is 2,049 bytes; the maximum is 2,048'],
        [{ ...good[0], title: 'a\u0000b' }, 'renders[2].title contains U+0000, which the archive reserves'],
        [{ ...good[0], value: 5 as unknown as string }, 'renders[2].value must be a string or a Uint8Array, got number'],
        [{ ...good[0], headers: { a: 1 as unknown as string } }, 'renders[2].headers["a"] is number; header values must be strings'],
        [{ ...good[0], value: 'x'.repeat(8 * 1024 * 1024) }, 'renders[2] (bodies and headers) is 8,388,655 bytes encoded; the maximum is 8,388,608'],
      ];
      for (const [bad, message] of cases) {
        const err = await rejection(store.append([...good, bad]));
        expect(err).toBeInstanceOf(InvalidArgumentError);
        expect(err).toMatchObject({ code: 'INVALID_ARGUMENT', index: 2, message });
      }
      expect((await store.stats()).revisions).toBe(0);
      expect(await store.get('Checked', 1)).toBeNull();
      await expect(store.get('Checked', -2)).rejects.toThrow('rev is -2; it must be an integer from 0 to 9007199254740991');
      await expect(store.get('Checked', 1, 'not-a-uuid')).rejects.toThrow('tid is "not-a-uuid"; it must be a time-based (version 1) UUID');
      await store.close();
    });

    it('continues across handles: a reopened archive reads everything and appends into the open block', async () => {
      const space = await ctx.target().space();
      const all = renders('Reopened', 10);
      const first = space.open({ blockRevisions: 4 });
      await first.append(all.slice(0, 6));
      await first.close(); // flushes: revs 5-6 go into the open block's image
      const second = space.open({ blockRevisions: 4 });
      expect(await second.stats('Reopened')).toMatchObject({ revisions: 6, sealedBlocks: 1, blocks: 2, pendingRevisions: 0 });
      await second.append(all.slice(6));
      expect(await second.stats('Reopened')).toMatchObject({ revisions: 10, sealedBlocks: 2, blocks: 3, pendingRevisions: 2 });
      await expectAllReadBack(second, all);
      await second.close();
      const third = space.open({ blockRevisions: 4 });
      await expectAllReadBack(third, all);
      await third.close();
    });

    it('refuses calls after close with ObjectClosedError', async () => {
      const space = await ctx.target().space();
      const store = space.open();
      await store.close();
      await store.close();
      const err = await rejection(store.append(renders('Closed', 1)));
      expect(err).toBeInstanceOf(ObjectClosedError);
      expect(err.code).toBe('OBJECT_CLOSED');
      await expect(store.get('Closed', 1)).rejects.toBeInstanceOf(ObjectClosedError);
      await expect(store.stats()).rejects.toBeInstanceOf(ObjectClosedError);
    });
  });
}
