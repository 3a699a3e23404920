/** Archive conformance: a damaged block is reported, never returned; the cache keeps what it read. */
import { describe, expect, it } from 'vitest';
import { ArchiveCorruptedError } from '../../client';
import { ArchiveSuiteContext, Damage, expected, rejection, renders } from './archive-context';

const MESSAGES: Record<Damage, RegExp> = {
  flip: /^archive block 1 of page "Damaged" is corrupted: its checksum does not match$/,
  truncate: /^archive block 1 of page "Damaged" is corrupted: it is \d+ bytes; its header says \d+$/,
  header: /^archive block 1 of page "Damaged" is corrupted: its header is missing or damaged$/,
};

export function corruptionConformance(ctx: ArchiveSuiteContext): void {
  describe('ArchiveStore damaged blocks', () => {
    for (const damage of ['flip', 'truncate', 'header'] as const) {
      it(`reports a block damaged by "${damage}" with ArchiveCorruptedError naming the page and block`, async () => {
        const space = await ctx.target().space();
        const all = renders('Damaged', 9);
        const store = space.open({ blockRevisions: 4, cacheBytes: 0 });
        await store.append(all);
        await space.damageBlock('Damaged', 1, damage);
        for (const tid of [undefined, all[5].tid]) {
          const err = await rejection(store.get('Damaged', 6, tid));
          expect(err).toBeInstanceOf(ArchiveCorruptedError);
          expect(err).toMatchObject({ code: 'ARCHIVE_CORRUPTED', title: 'Damaged', block: 1 });
          expect(err.message).toMatch(MESSAGES[damage]);
        }
        // The other blocks and the open block still read.
        expect(await store.get('Damaged', 1)).toEqual(expected(all[0]));
        expect(await store.get('Damaged', 9)).toEqual(expected(all[8]));
        await store.close();
      });
    }

    it('serves a block it has cached; a handle without it reads the damage', async () => {
      const space = await ctx.target().space();
      const all = renders('Damaged', 8);
      const cached = space.open({ blockRevisions: 4 });
      await cached.append(all);
      expect(await cached.get('Damaged', 5)).toEqual(expected(all[4]));
      await space.damageBlock('Damaged', 1, 'flip');
      expect(await cached.get('Damaged', 6)).toEqual(expected(all[5]));
      const fresh = space.open({ blockRevisions: 4 });
      await expect(fresh.get('Damaged', 6)).rejects.toBeInstanceOf(ArchiveCorruptedError);
      await Promise.all([cached.close(), fresh.close()]);
    });
  });
}
