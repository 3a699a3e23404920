/**
 * PageRevisionStore writes and reads: round trips with headers and parts, precedence by (rev, tid)
 * whatever the order of arrival, `ifAbsent`, and the checks of every argument.
 */
import { describe, expect, it } from 'vitest';
import { BadKeyVersionError, ConditionalTableUpdateError, MAX_KEY_FAMILY_LENGTH, MAX_RENDER_BYTES, MAX_RENDER_HEADERS_BYTES, RenderExistsError, timeOf } from '../../client';
import { KIND, positionOf } from '../../client/revisions/key-layout';
import { bytes, expectInvalid, familyKeys, rejection, RevisionsSuiteContext, summary, T0, text, tidAt } from './revisions-context';

export function basicsSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore.putRender and reads', () => {
    it('round-trips a small render with headers and parts through getLatest, getRevision and getRender', async () => {
      const { store } = await ctx.store();
      const tid = tidAt(T0);
      const input = {
        title: 'en.wikipedia.org/Main_Page',
        rev: 7,
        tid,
        value: '<p>Hello</p>',
        headers: { 'content-type': 'text/html; charset=utf-8', etag: '"7/x"' },
        parts: { 'data-parsoid': '{"ids":{}}', 'section-offsets': Buffer.from([0, 1, 2, 255]) },
      };
      expect(await store.putRender(input)).toEqual({ title: input.title, rev: 7, tid });
      const expected = { ...input, parts: { 'data-parsoid': '{"ids":{}}', 'section-offsets': Buffer.from([0, 1, 2, 255]) } };
      expect(await store.getLatest(input.title)).toEqual(expected);
      expect(await store.getRevision(input.title, 7)).toEqual(expected);
      expect(await store.getRender(input.title, 7, tid)).toEqual(expected);
    });

    it('round-trips 60 KB bodies as text and as bytes, with headers and parts', async () => {
      const { store } = await ctx.store();
      const html = text(60_000, 2);
      const data = bytes(60_000);
      await store.putRender({ title: 'P', rev: 1, tid: tidAt(T0), value: html, headers: { 'content-type': 'text/html' }, parts: { 'data-parsoid': data, 'section-offsets': text(60_000, 3) } });
      await store.putRender({ title: 'P', rev: 2, tid: tidAt(T0 + 1), value: data });
      const one = await store.getRevision('P', 1);
      expect(Buffer.isBuffer(one?.parts['data-parsoid'])).toBe(true);
      expect(summary(one)).toEqual(
        summary({ title: 'P', rev: 1, tid: tidAt(T0), value: html, headers: { 'content-type': 'text/html' }, parts: { 'data-parsoid': data, 'section-offsets': text(60_000, 3) } }),
      );
      const latest = await store.getLatest('P');
      expect(Buffer.isBuffer(latest?.value)).toBe(true);
      expect(summary(latest)).toEqual(summary({ title: 'P', rev: 2, tid: tidAt(T0 + 1), value: data, headers: {}, parts: {} }));
    });

    it('reads every body as bytes when asked (text as its UTF-8), small and chunked, and refuses bad read options', async () => {
      const { store } = await ctx.store();
      const html = text(60_000, 2); // over one value: stored in chunks
      const small = { title: 'P', rev: 1, tid: tidAt(T0), value: '<p>Grüße</p>', headers: { etag: '"1"' }, parts: { 'data-parsoid': '{"ids":{}}', raw: Buffer.from([0, 255]) } };
      await store.putRender(small);
      await store.putRender({ title: 'P', rev: 2, tid: tidAt(T0 + 1), value: html, parts: { 'section-offsets': text(60_000, 3) } });
      const asBytes = { ...small, value: Buffer.from('<p>Grüße</p>'), parts: { 'data-parsoid': Buffer.from('{"ids":{}}'), raw: Buffer.from([0, 255]) } };
      expect(await store.getRevision('P', 1, { bytes: true })).toEqual(asBytes);
      expect(await store.getRender('P', 1, small.tid, { bytes: true })).toEqual(asBytes);
      expect(await store.getRender('P', 1, small.tid, { bytes: false })).toEqual(small);
      const latest = await store.getLatest('P', { bytes: true });
      expect(Buffer.isBuffer(latest?.value) && Buffer.isBuffer(latest?.parts['section-offsets'])).toBe(true);
      expect(summary(latest)).toEqual(summary({ title: 'P', rev: 2, tid: tidAt(T0 + 1), value: Buffer.from(html), headers: {}, parts: { 'section-offsets': Buffer.from(text(60_000, 3)) } }));
      expect(typeof (await store.getLatest('P'))?.value).toBe('string');
      await expectInvalid(store.getLatest('P', { bytes: 'yes' } as never), 'options.bytes must be a boolean, got string');
      await expectInvalid(store.getRevision('P', 1, 7 as never), 'options must be an object, got number');
      await expectInvalid(store.getRender('P', 1, small.tid, null as never), 'options must be an object, got null');
    });

    it('gives a render without a tid a new time-based UUID at the store clock', async () => {
      const { store, clock } = await ctx.store();
      clock.advance(12_345);
      const a = await store.putRender({ title: 'P', rev: 1, value: 'a' });
      const b = await store.putRender({ title: 'P', rev: 1, value: 'b' });
      expect(a.tid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect([timeOf(a.tid), timeOf(b.tid)]).toEqual([T0 + 12_345, T0 + 12_345]);
      // Same millisecond, later id: the later render is the revision's latest.
      expect((await store.getRevision('P', 1))?.value).toBe('b');
    });

    it('orders by (rev, tid) whatever the order of arrival: a late lower one never displaces a higher one', async () => {
      const { store, table } = await ctx.store();
      const t = (i: number) => tidAt(T0 + i * 1000);
      for (const [rev, i] of [
        [3, 5],
        [1, 9],
        [5, 1],
        [2, 2],
        [5, 3],
        [5, 2],
        [4, 8],
      ]) {
        await store.putRender({ title: 'P', rev, tid: t(i), value: `r${rev}/t${i}` });
      }
      expect((await store.getLatest('P'))?.value).toBe('r5/t3');
      expect((await store.getRevision('P', 5))?.value).toBe('r5/t3');
      expect((await store.getRevision('P', 1))?.value).toBe('r1/t9');
      expect((await store.getRender('P', 5, t(1)))?.value).toBe('r5/t1');
      expect((await store.getRender('P', 5, t(2)))?.value).toBe('r5/t2');
      // The family's first key is the latest render: getLatest reads that one key.
      const keys = await familyKeys(table, 'P');
      expect(keys[0].equals(Buffer.concat([Buffer.of(KIND.RENDER), positionOf(5, t(3))]))).toBe(true);
    });

    it('orders tids by their timestamp, not by their text', async () => {
      const { store } = await ctx.store();
      // The text of a v1 UUID starts with the low bits of its time: only the rearranged bytes sort by time.
      const early = tidAt(T0);
      let later = 1000;
      while (tidAt(T0 + later) > early) later += 1000; // time_low wraps every 429.5 s
      const late = tidAt(T0 + later);
      expect(late < early).toBe(true);
      await store.putRender({ title: 'P', rev: 1, tid: late, value: 'late' });
      await store.putRender({ title: 'P', rev: 1, tid: early, value: 'early' });
      expect((await store.getLatest('P'))?.tid).toBe(late);
      const oldEpoch = tidAt(Date.UTC(1999, 0, 1));
      await store.putRender({ title: 'Q', rev: 1, tid: oldEpoch, value: 'old' });
      await store.putRender({ title: 'Q', rev: 1, tid: early, value: 'new' });
      expect((await store.getLatest('Q'))?.value).toBe('new');
    });

    it('refuses ifAbsent on an existing (rev, tid) with RenderExistsError and changes nothing', async () => {
      const { store } = await ctx.store();
      const tid = tidAt(T0);
      await store.putRender({ title: 'P', rev: 1, tid, value: 'first' }, { ifAbsent: true });
      const err = await rejection(store.putRender({ title: 'P', rev: 1, tid, value: 'second', parts: { x: 'y' } }, { ifAbsent: true }));
      expect(err).toBeInstanceOf(RenderExistsError);
      expect(err).toBeInstanceOf(BadKeyVersionError);
      expect(err).toBeInstanceOf(ConditionalTableUpdateError);
      expect([err.code, err.name, err.message]).toEqual(['BAD_KEY_VERSION', 'RenderExistsError', `render ${tid} of revision 1 of page "P" already exists`]);
      expect([(err as RenderExistsError).title, (err as RenderExistsError).rev, (err as RenderExistsError).tid]).toEqual(['P', 1, tid]);
      expect(await store.getRender('P', 1, tid)).toEqual({ title: 'P', rev: 1, tid, value: 'first', headers: {}, parts: {} });
      // Another tid of the same revision is absent: accepted. Without ifAbsent, a put replaces.
      await store.putRender({ title: 'P', rev: 1, tid: tidAt(T0 + 1), value: 'other' }, { ifAbsent: true });
      await store.putRender({ title: 'P', rev: 1, tid, value: 'replaced' });
      expect((await store.getRender('P', 1, tid))?.value).toBe('replaced');
    });

    it('reads null for a page, revision or render it does not have', async () => {
      const { store } = await ctx.store();
      expect(await store.getLatest('nothing')).toBeNull();
      expect(await store.getRevision('nothing', 1)).toBeNull();
      await store.putRender({ title: 'P', rev: 2, tid: tidAt(T0), value: 'x' });
      expect(await store.getRevision('P', 1)).toBeNull();
      expect(await store.getRevision('P', 3)).toBeNull();
      expect(await store.getRender('P', 2, tidAt(T0 + 1))).toBeNull();
      expect(await store.listRevisions('nothing')).toEqual({ items: [] });
    });

    it('keeps pages apart: one family each, and titles() finds each page once', async () => {
      const { store } = await ctx.store();
      await store.putRender({ title: 'en/A', rev: 1, tid: tidAt(T0), value: 'a' });
      await store.putRender({ title: 'en/A', rev: 2, tid: tidAt(T0), value: 'a2' });
      await store.putRender({ title: 'en/B', rev: 9, tid: tidAt(T0), value: 'b' });
      await store.putRender({ title: 'de/Ä', rev: 1, tid: tidAt(T0), value: Buffer.alloc(2_000_000, 1) });
      expect((await store.getLatest('en/A'))?.value).toBe('a2');
      expect((await store.getLatest('en/B'))?.value).toBe('b');
      expect(await store.getRevision('en/A', 9)).toBeNull();
      const titles: string[] = [];
      for await (const title of store.titles()) titles.push(title);
      expect(titles.sort()).toEqual(['de/Ä', 'en/A', 'en/B']);
    });
  });

  describe('PageRevisionStore argument checks', () => {
    const long = 'x'.repeat(MAX_KEY_FAMILY_LENGTH + 1);
    it('refuses a bad rev, tid or title on writes and reads alike, naming the field and the limit', async () => {
      const { store, table } = await ctx.store();
      const tid = tidAt(T0);
      const put = (over: Record<string, unknown>) => store.putRender({ title: 'P', rev: 1, tid, value: 'v', ...over } as never);
      await expectInvalid(put({ rev: -1 }), 'rev is -1; the minimum is 0');
      await expectInvalid(put({ rev: 1.5 }), 'rev is 1.5; it must be an integer');
      await expectInvalid(put({ rev: 2 ** 53 }), 'rev is 9007199254740992; the maximum is 9007199254740991');
      await expectInvalid(put({ rev: '1' }), 'rev must be a number, got string');
      await expectInvalid(put({ tid: 'abc' }), 'tid is "abc"; it must be a time-based (version 1) UUID such as 6ba7b810-9dad-11d1-80b4-00c04fd430c8');
      await expectInvalid(
        put({ tid: '3b241101-e2bb-4255-8caf-4136c566a962' }),
        'tid is "3b241101-e2bb-4255-8caf-4136c566a962"; it must be a time-based (version 1) UUID such as 6ba7b810-9dad-11d1-80b4-00c04fd430c8',
      );
      await expectInvalid(put({ title: '' }), 'title is empty; the minimum is 1 byte');
      await expectInvalid(put({ title: long }), `title is ${MAX_KEY_FAMILY_LENGTH + 1} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`);
      await expectInvalid(put({ title: 7 }), 'title must be a string, got number');
      await expectInvalid(store.getLatest(''), 'title is empty; the minimum is 1 byte');
      await expectInvalid(store.getRevision('P', -1), 'rev is -1; the minimum is 0');
      await expectInvalid(store.getRevision(long, 1), `title is ${MAX_KEY_FAMILY_LENGTH + 1} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`);
      await expectInvalid(store.getRender('P', 1, 'nope'), 'tid is "nope"; it must be a time-based (version 1) UUID such as 6ba7b810-9dad-11d1-80b4-00c04fd430c8');
      await expectInvalid(store.listRevisions('P', { limit: 0 }), 'limit is 0; the minimum is 1');
      await expectInvalid(store.listRevisions('P', { limit: 1001 }), 'limit is 1001; the maximum is 1000');
      expect(await familyKeys(table, 'P')).toEqual([]);
    });

    it('round-trips text that holds U+FFFD itself (only a lone surrogate is refused)', async () => {
      const { store } = await ctx.store();
      const value = 'replacement \ufffd, pair \ud83d\ude00, \ufffd again';
      await store.putRender({ title: 'P', rev: 1, tid: tidAt(T0), value, parts: { p: '\ufffd' } });
      expect(await store.getLatest('P')).toMatchObject({ value, parts: { p: '\ufffd' } });
    });

    it('refuses bad bodies, headers and parts, and a render over MAX_RENDER_BYTES, writing nothing', async () => {
      const { store, table } = await ctx.store();
      const put = (over: Record<string, unknown>) => store.putRender({ title: 'P', rev: 1, tid: tidAt(T0), value: 'v', ...over } as never);
      await expectInvalid(put({ value: 5 }), 'value must be a string or a Uint8Array, got number');
      await expectInvalid(put({ value: 'a\ud800b' }), 'value holds a lone UTF-16 surrogate; give bytes (a Uint8Array) for anything that is not valid Unicode text');
      await expectInvalid(put({ value: '\ufffd then a lone \udc00' }), 'value holds a lone UTF-16 surrogate; give bytes (a Uint8Array) for anything that is not valid Unicode text');
      await expectInvalid(put({ headers: { etag: 5 } }), 'headers["etag"] must be a string, got number');
      await expectInvalid(put({ headers: ['x'] }), 'headers must be an object of strings, got an array');
      const bigHeader = { h: 'x'.repeat(MAX_RENDER_HEADERS_BYTES) };
      await expectInvalid(put({ headers: bigHeader }), `headers are ${MAX_RENDER_HEADERS_BYTES + 8} bytes as JSON; the maximum is ${MAX_RENDER_HEADERS_BYTES}`);
      await expectInvalid(put({ parts: { '': 'x' } }), 'a part name is empty; the minimum is 1 byte');
      await expectInvalid(put({ parts: { p: null } }), 'parts["p"] must be a string or a Uint8Array, got null');
      const over = Buffer.alloc(MAX_RENDER_BYTES - 2 + 1);
      await expectInvalid(put({ value: over }), `render is ${MAX_RENDER_BYTES + 1} bytes (value, parts and headers); the maximum is ${MAX_RENDER_BYTES}`);
      await expectInvalid(put({ value: Buffer.alloc(MAX_RENDER_BYTES + 1) }), `value is ${MAX_RENDER_BYTES + 1} bytes; the maximum is ${MAX_RENDER_BYTES}`);
      await expectInvalid(
        put({ value: Buffer.alloc(MAX_RENDER_BYTES / 2), parts: { a: Buffer.alloc(MAX_RENDER_BYTES / 2) } }),
        `render is ${MAX_RENDER_BYTES + 3} bytes (value, parts and headers); the maximum is ${MAX_RENDER_BYTES}`,
      );
      expect(await familyKeys(table, 'P')).toEqual([]);
    });

    it('refuses bad options when made, naming the option', async () => {
      const { table } = await ctx.store();
      const { PageRevisionStore } = await import('../../client');
      const make = (options: object) => () => new PageRevisionStore(table, options);
      expect(make({ recencyWindowMs: 0 })).toThrow('recencyWindowMs is 0; the minimum is 1');
      expect(make({ historicalTtlMs: 1.5 })).toThrow('historicalTtlMs must be an integer number of milliseconds, got 1.5');
      expect(make({ clock: 5 })).toThrow('clock must be a function returning milliseconds, got number');
      expect(make({ tokenSecret: '' })).toThrow('tokenSecret must be a non-empty string or Uint8Array');
    });

    it('refuses calls after close() with ObjectClosedError and leaves the table open', async () => {
      const { store, table } = await ctx.store();
      await store.close();
      const err = await rejection(store.getLatest('P'));
      expect([err.name, err.code, err.message]).toEqual(['ObjectClosedError', 'OBJECT_CLOSED', 'the PageRevisionStore is closed']);
      expect(await table.get('P', Buffer.of(1))).toBeNull();
    });
  });
}
