/**
 * Limits: a document over one table value, an id over one key family, a bulk over its limits — each
 * an InvalidArgumentError naming the limit, with nothing written.
 */
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_ITEMS, MAX_DOCUMENT_BYTES, MAX_DOCUMENT_ID_LENGTH } from '../../client';
import { DocumentsSuiteContext, expectInvalid, markerCount, replicated } from './documents-context';

export function limitsSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore limits', () => {
    it('stores a document just under one value and refuses one over it, writing nothing', async () => {
      const { store } = await ctx.store();
      // {"text":"…"} is 11 bytes around the text, and a leaf value has a 3-byte header.
      const fits = 'x'.repeat(MAX_DOCUMENT_BYTES - 3 - 11);
      const first = await store.put('big', { text: fits });
      expect((await store.get('big'))?.text).toHaveLength(fits.length);
      await expectInvalid(store.put('huge', { text: `${fits}y` }), `document "huge" is ${MAX_DOCUMENT_BYTES + 1} bytes; the maximum is ${MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)`);
      // The same body as an edit: with its path of one ancestor (33 bytes) it no longer fits.
      await expectInvalid(
        store.put('big', { text: fits }, { rev: first.rev }),
        `document "big" is ${MAX_DOCUMENT_BYTES + 33} bytes with its revision path of 1 ancestors; the maximum is ${MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)`,
      );
      expect(await store.get('huge')).toBeNull();
      expect((await store.get('big'))?._rev).toBe(first.rev);
      expect((await store.changes()).results.map((r) => [r.id, r.rev])).toEqual([['big', first.rev]]);
    });

    it('refuses an id over one key family, and a bulk with an oversized document, writing nothing', async () => {
      const { store, table } = await ctx.store();
      const long = 'é'.repeat(Math.ceil((MAX_DOCUMENT_ID_LENGTH + 1) / 2));
      await expectInvalid(store.put(long, { v: 1 }), `id is ${Buffer.byteLength(long)} bytes; the maximum is ${MAX_DOCUMENT_ID_LENGTH}`);
      await expectInvalid(store.put('bad\ud800', { v: 1 }), 'id "bad\\ud800" has a lone surrogate: it is not valid UTF-16');
      const huge = 'x'.repeat(MAX_DOCUMENT_BYTES);
      await expectInvalid(
        store.bulkDocs([replicated('ok', 1, ['a'], { v: 1 }), replicated('huge', 1, ['b'], { text: huge })], { newEdits: false }),
        `document "huge" is ${MAX_DOCUMENT_BYTES + 14} bytes; the maximum is ${MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)`,
      );
      // A bulk whose merged history overflows is refused whole too, after its reads.
      const fits = 'x'.repeat(MAX_DOCUMENT_BYTES - 3 - 11 - 2 * 2);
      await store.bulkDocs([replicated('deep', 3, ['c', 'b', 'a'], { text: fits })], { newEdits: false });
      // Documents of every partition beside it: the markers of all of them are taken back.
      const others = Array.from({ length: 8 }, (_, i) => replicated(`ok-${i}`, 1, ['a'], { v: i }));
      await expectInvalid(
        store.bulkDocs([...others, replicated('deep', 4, ['d', 'c'], { text: fits })], { newEdits: false }),
        `document "deep" is ${MAX_DOCUMENT_BYTES + 2} bytes with its revision path of 3 ancestors; the maximum is ${MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)`,
      );
      expect(await store.get('ok-0')).toBeNull();
      expect((await store.changes()).results.map((r) => r.id)).toEqual(['deep']);
      expect(await markerCount(table, ctx.target().partitionCount)).toBe(0);
    });

    it('refuses a bulk that gives one document more new leaves than one batch holds, writing nothing', async () => {
      const { store, table } = await ctx.store();
      const hashes = Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => `h${i}`);
      await expectInvalid(
        store.bulkDocs([replicated('ok', 1, ['a'], { v: 1 }), ...hashes.map((h) => replicated('wide', 1, [h]))], { newEdits: false }),
        `bulkDocs changes ${MAX_BATCH_ITEMS} leaves of document "wide" at once; the maximum is ${MAX_BATCH_ITEMS - 1} (MAX_BATCH_ITEMS less the head)`,
      );
      expect([await store.get('ok'), await store.get('wide')]).toEqual([null, null]);
      expect(await markerCount(table, ctx.target().partitionCount)).toBe(0);
      // One leaf fewer fits.
      await store.bulkDocs(
        hashes.slice(1).map((h) => replicated('wide', 1, [h])),
        { newEdits: false },
      );
      expect((await store.openRevs('wide', 'all')).length).toBe(MAX_BATCH_ITEMS - 1);
    });
  });
}
