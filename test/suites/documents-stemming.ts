/**
 * revsLimit: each branch keeps the newest revsLimit positions of its path, counting its leaf, on
 * interactive edits and on replication.
 */
import { describe, expect, it } from 'vitest';
import { DocumentsSuiteContext, hashOf, replicated } from './documents-context';

export function stemmingSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore revsLimit', () => {
    for (const limit of [1, 2, 5]) {
      it(`keeps ${limit} position${limit > 1 ? 's' : ''} of each path with revsLimit ${limit}`, async () => {
        const { store } = await ctx.store({ revsLimit: limit });
        const revs: string[] = [];
        let rev: string | undefined;
        for (let i = 1; i <= 8; i++) {
          rev = (await store.put('doc', { i }, rev === undefined ? {} : { rev })).rev;
          revs.unshift(rev);
        }
        expect(await store.get('doc', { revs: true })).toEqual({ _id: 'doc', _rev: revs[0], i: 8, _revisions: { start: 8, ids: revs.slice(0, limit).map(hashOf) } });
        // A long replicated path is stemmed the same way, and a stemmed-away rev is no longer known.
        await store.bulkDocs([replicated('r', 6, ['f', 'e', 'd', 'c', 'b', 'a'])], { newEdits: false });
        expect((await store.get('r', { revs: true }))?._revisions).toEqual({ start: 6, ids: ['f', 'e', 'd', 'c', 'b', 'a'].slice(0, limit) });
        expect(Object.keys(await store.revsDiff({ r: ['6-f', `${6 - limit + 1}-${'fedcba'[limit - 1]}`] }))).toEqual([]);
        expect(await store.revsDiff({ r: ['1-a'] })).toEqual(limit >= 6 ? {} : { r: { missing: ['1-a'] } });
      });
    }
  });
}
