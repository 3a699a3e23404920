/** PageRevisionStore.listRevisions: pages newest first, signed page tokens, exact resumption. */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, PageRevisionStore } from '../../client';
import { expectInvalid, rejection, RevisionsSuiteContext, T0, tidAt } from './revisions-context';

/** Revisions 1..7 of page P, revisions 2 and 5 with two renders (the later one is their latest). */
async function sevenRevisions(store: PageRevisionStore): Promise<void> {
  for (let rev = 1; rev <= 7; rev++) await store.putRender({ title: 'P', rev, tid: tidAt(T0 + rev * 10), value: `r${rev}` });
  await store.putRender({ title: 'P', rev: 2, tid: tidAt(T0 + 100), value: 'r2 again' });
  await store.putRender({ title: 'P', rev: 5, tid: tidAt(T0 + 101), value: 'r5 again' });
}

const values = (page: { items: { value: unknown }[] }) => page.items.map((r) => r.value);

export function listingSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore.listRevisions', () => {
    it('lists the latest render of each revision, newest first, in pages of 3, 3, 1 and then no token', async () => {
      const { store } = await ctx.store();
      await sevenRevisions(store);
      const first = await store.listRevisions('P', { limit: 3 });
      expect(values(first)).toEqual(['r7', 'r6', 'r5 again']);
      expect(typeof first.nextPageToken).toBe('string');
      const second = await store.listRevisions('P', { limit: 3, pageToken: first.nextPageToken });
      expect(values(second)).toEqual(['r4', 'r3', 'r2 again']);
      const third = await store.listRevisions('P', { limit: 3, pageToken: second.nextPageToken });
      expect(values(third)).toEqual(['r1']);
      expect(third.nextPageToken).toBeUndefined();
      expect(Object.keys(third)).toEqual(['items']);
      expect(third.items[0]).toEqual({ title: 'P', rev: 1, tid: tidAt(T0 + 10), value: 'r1', headers: {}, parts: {} });
    });

    it('lists every render with allRenders, and ends without a token on an exact fit', async () => {
      const { store } = await ctx.store();
      await sevenRevisions(store);
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await store.listRevisions('P', { limit: 3, allRenders: true, pageToken: token });
        seen.push(...(page.items.map((r) => r.value) as string[]));
        token = page.nextPageToken;
        pages++;
      } while (token);
      expect(seen).toEqual(['r7', 'r6', 'r5 again', 'r5', 'r4', 'r3', 'r2 again', 'r2', 'r1']);
      expect(pages).toBe(3);
      const all = await store.listRevisions('P', { limit: 9, allRenders: true });
      expect([all.items.length, all.nextPageToken]).toEqual([9, undefined]);
    });

    it('resumes exactly after the last item when revisions and renders are added in between', async () => {
      const { store } = await ctx.store();
      await sevenRevisions(store);
      const first = await store.listRevisions('P', { limit: 3 });
      await store.putRender({ title: 'P', rev: 8, tid: tidAt(T0 + 200), value: 'r8' });
      await store.putRender({ title: 'P', rev: 9, tid: tidAt(T0 + 201), value: 'r9' });
      await store.putRender({ title: 'P', rev: 3, tid: tidAt(T0 + 202), value: 'r3 again' });
      const second = await store.listRevisions('P', { limit: 3, pageToken: first.nextPageToken });
      expect(values(second)).toEqual(['r4', 'r3 again', 'r2 again']);
      const allFirst = await store.listRevisions('P', { limit: 2, allRenders: true });
      expect(values(allFirst)).toEqual(['r9', 'r8']);
      await store.putRender({ title: 'P', rev: 9, tid: tidAt(T0 + 300), value: 'r9 again' });
      await store.putRender({ title: 'P', rev: 7, tid: tidAt(T0 + 301), value: 'r7 again' });
      expect(values(await store.listRevisions('P', { limit: 2, allRenders: true, pageToken: allFirst.nextPageToken }))).toEqual(['r7 again', 'r7']);
    });

    it('refuses tampered, truncated and foreign tokens with InvalidArgumentError', async () => {
      const { store, table } = await ctx.store({ tokenSecret: 'one secret' });
      await sevenRevisions(store);
      await store.putRender({ title: 'Q', rev: 1, tid: tidAt(T0), value: 'q' });
      await store.putRender({ title: 'Q', rev: 2, tid: tidAt(T0), value: 'q' });
      const token = (await store.listRevisions('P', { limit: 2 })).nextPageToken!;
      const flipped = token.slice(0, 5) + (token[5] === 'A' ? 'B' : 'A') + token.slice(6);
      const foreignMessage = 'pageToken is not valid for page "P": it was altered, or made for another page or by a store with another tokenSecret';
      await expectInvalid(store.listRevisions('P', { pageToken: flipped }), foreignMessage);
      await expectInvalid(store.listRevisions('P', { pageToken: token.slice(0, -3) }), 'pageToken is malformed: truncated or padded');
      await expectInvalid(store.listRevisions('P', { pageToken: token + 'AAAA' }), 'pageToken is malformed: truncated or padded');
      await expectInvalid(store.listRevisions('P', { pageToken: 'not a token!' }), 'pageToken is malformed: not a token listRevisions made (12 characters; the maximum is 128, base64url)');
      await expectInvalid(store.listRevisions('P', { pageToken: 5 as never }), 'pageToken must be a string, got number');
      // Another page's token, another secret's token, another listing's token.
      const ofQ = (await store.listRevisions('Q', { limit: 1 })).nextPageToken!;
      await expectInvalid(store.listRevisions('P', { pageToken: ofQ }), foreignMessage);
      const other = new PageRevisionStore(table, { tokenSecret: 'another secret' });
      await expectInvalid(other.listRevisions('P', { pageToken: token }), foreignMessage);
      await expectInvalid(store.listRevisions('P', { pageToken: token, allRenders: true }), 'pageToken was made for a listing with allRenders false; this one has allRenders true');
      const err = await rejection(store.listRevisions('P', { pageToken: flipped }));
      expect(err).toBeInstanceOf(InvalidArgumentError);
    });

    it('accepts the tokens of another store with the same tokenSecret', async () => {
      const { store, table } = await ctx.store({ tokenSecret: Buffer.from('shared') });
      await sevenRevisions(store);
      const token = (await store.listRevisions('P', { limit: 4 })).nextPageToken;
      const twin = new PageRevisionStore(table, { tokenSecret: 'shared' });
      expect(values(await twin.listRevisions('P', { limit: 4, pageToken: token }))).toEqual(['r3', 'r2 again', 'r1']);
    });
  });
}
