/** Archive conformance: blocks seal at their count and size; the index finds renders in every state of a block. */
import { describe, expect, it } from 'vitest';
import type { ArchivedRender, ArchiveStore } from '../../client';
import { ArchiveSuiteContext, expectAllReadBack, expected, renders } from './archive-context';

/** Block and sealed flag of each render, in order. */
async function placesOf(store: ArchiveStore, all: ArchivedRender[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of all) {
    const at = await store.locate(r.title, r.rev, r.tid);
    out.push(at ? `${at.block}${at.sealed ? 's' : 'o'}` : 'missing');
  }
  return out;
}

export function blocksConformance(ctx: ArchiveSuiteContext): void {
  describe('ArchiveStore blocks', () => {
    it('seals a block when it holds blockRevisions renders, whether appended one by one or together', async () => {
      const space = await ctx.target().space();
      const store = space.open({ blockRevisions: 4 });
      const oneByOne = renders('Count/one', 10);
      for (const r of oneByOne) await store.append([r]);
      const together = renders('Count/all', 10);
      await store.append(together);
      for (const all of [oneByOne, together]) {
        expect(await placesOf(store, all)).toEqual(['0s', '0s', '0s', '0s', '1s', '1s', '1s', '1s', '2o', '2o']);
        expect(await store.stats(all[0].title)).toMatchObject({ revisions: 10, blocks: 3, sealedBlocks: 2, pendingRevisions: 2 });
      }
      await store.flush();
      expect(await store.stats('Count/one')).toMatchObject({ revisions: 10, blocks: 3, sealedBlocks: 2, pendingRevisions: 0 });
      expect(await placesOf(store, oneByOne)).toEqual(['0s', '0s', '0s', '0s', '1s', '1s', '1s', '1s', '2o', '2o']);
      // The image and two pending renders are sealed together when the block fills.
      const more = renders('Count/one', 2, 11);
      await store.append(more);
      expect(await placesOf(store, [...oneByOne, ...more])).toEqual(['0s', '0s', '0s', '0s', '1s', '1s', '1s', '1s', '2s', '2s', '2s', '2s']);
      expect(await store.stats()).toMatchObject({ pages: 2, revisions: 22, blocks: 6, sealedBlocks: 5, pendingRevisions: 0 });
      await expectAllReadBack(store, [...oneByOne, ...more, ...together]);
      await store.close();
    });

    it('seals a block at blockBytes: a render that would go over opens the next block', async () => {
      const space = await ctx.target().space();
      const store = space.open({ blockRevisions: 100, blockBytes: 1024 });
      // 300 bytes of text + 16 of headers JSON each: three fit in 1,024 bytes, a fourth would not.
      const small = renders('Size', 7, 1, 300);
      await store.append(small);
      expect(await placesOf(store, small)).toEqual(['0s', '0s', '0s', '1s', '1s', '1s', '2o']);
      // A render larger than a block has one of its own; one that fills a block exactly seals it.
      const big = renders('Size', 1, 8, 5000);
      const exact = renders('Size', 1, 9, 1024 - 16);
      await store.append([...big, ...exact]);
      expect(await placesOf(store, [...big, ...exact])).toEqual(['3s', '4s']);
      expect(await store.locate('Size', 7)).toMatchObject({ block: 2, sealed: true });
      await expectAllReadBack(store, [...small, ...big, ...exact]);
      await store.close();
    });

    it('finds renders by (title, rev) and (title, rev, tid) in sealed blocks, images and pending records', async () => {
      const space = await ctx.target().space();
      const store = space.open({ blockRevisions: 3 });
      const all = renders('Lookup', 8);
      await store.append(all.slice(0, 5)); // block 0 sealed, block 1 holds revs 4-5 pending
      await store.flush(); // revs 4-5 into block 1's image
      await store.append(all.slice(5, 7)); // rev 6 fills and seals block 1, rev 7 pending in block 2
      await store.append(all.slice(7)); // rev 8 pending too
      expect(await placesOf(store, all)).toEqual(['0s', '0s', '0s', '1s', '1s', '1s', '2o', '2o']);
      for (const r of all) {
        expect(await store.get(r.title, r.rev)).toEqual(expected(r));
        expect(await store.get(r.title, r.rev, r.tid)).toEqual(expected(r));
        expect(await store.locate(r.title, r.rev)).toEqual({ title: r.title, rev: r.rev, tid: r.tid, block: Math.floor((r.rev - 1) / 3), sealed: r.rev <= 6 });
      }
      await store.close();
    });
  });
}
