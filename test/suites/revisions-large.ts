/**
 * Renders larger than one value: split into chunks of the same atomic update (or, past one batch,
 * staged and committed by the record), reassembled byte for byte, never read in part, and removed
 * with their record.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECENCY_WINDOW_MS, MAX_RENDER_BYTES, MAX_VALUE_LENGTH, PageRevisionStore, RenderExistsError } from '../../client';
import { KIND } from '../../client/revisions/key-layout';
import { beforeChunkReads, bytes, keysOfKind, rejection, RevisionsSuiteContext, summary, T0, text, tidAt } from './revisions-context';

const MiB = 1024 * 1024;
const chunksFor = (n: number) => Math.ceil(n / MAX_VALUE_LENGTH);

export function largeSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore renders over one value', () => {
    it('splits a render over one value across chunks of one update and reassembles it on every read', async () => {
      const { store, table } = await ctx.store();
      const tid = tidAt(T0);
      const value = text(1_500_000, 5);
      const parsoid = bytes(700_000);
      await store.putRender({ title: 'Big', rev: 1, tid, value, headers: { 'content-type': 'text/html' }, parts: { 'data-parsoid': parsoid, small: 'x' } });
      const expected = summary({ title: 'Big', rev: 1, tid, value, headers: { 'content-type': 'text/html' }, parts: { 'data-parsoid': parsoid, small: 'x' } });
      expect(summary(await store.getLatest('Big'))).toEqual(expected);
      expect(summary(await store.getRevision('Big', 1))).toEqual(expected);
      expect(summary(await store.getRender('Big', 1, tid))).toEqual(expected);
      expect((await store.listRevisions('Big')).items.map(summary)).toEqual([expected]);
      // One record (the latest is still one key), the bodies in chunks.
      expect(await keysOfKind(table, 'Big', KIND.RENDER)).toHaveLength(1);
      expect(await keysOfKind(table, 'Big', KIND.CHUNK)).toHaveLength(chunksFor(2_200_001));
    });

    it('stages a render larger than one batch and commits it whole, up to MAX_RENDER_BYTES', { timeout: 120_000 }, async () => {
      const { store, table } = await ctx.store();
      const twenty = bytes(20 * MiB);
      await store.putRender({ title: 'Huge', rev: 1, tid: tidAt(T0), value: twenty });
      expect(((await store.getLatest('Huge'))?.value as Buffer).equals(twenty)).toBe(true);
      expect(await keysOfKind(table, 'Huge', KIND.CHUNK)).toHaveLength(chunksFor(20 * MiB));
      // The maximum: the value and the headers' "{}" make MAX_RENDER_BYTES.
      const max = bytes(MAX_RENDER_BYTES - 2);
      await store.putRender({ title: 'Huge', rev: 2, tid: tidAt(T0 + 1), value: max });
      const read = await store.getRevision('Huge', 2);
      expect((read?.value as Buffer).equals(max)).toBe(true);
      expect(await keysOfKind(table, 'Huge', KIND.CHUNK)).toHaveLength(chunksFor(20 * MiB) + chunksFor(MAX_RENDER_BYTES - 2));
    });

    it('replaces the chunks of a (rev, tid) written again, keeping only the upload it replaced', async () => {
      const { store, table } = await ctx.store();
      const tid = tidAt(T0);
      await store.putRender({ title: 'P', rev: 1, tid, value: bytes(3 * MiB) });
      const second = bytes(2 * MiB);
      await store.putRender({ title: 'P', rev: 1, tid, value: second });
      // The first upload stays for readers that read its record just before: until the next rewrite.
      expect(await keysOfKind(table, 'P', KIND.CHUNK)).toHaveLength(chunksFor(3 * MiB) + chunksFor(2 * MiB));
      expect(((await store.getRender('P', 1, tid))?.value as Buffer).equals(second)).toBe(true);
      const third = bytes(1.5 * MiB);
      await store.putRender({ title: 'P', rev: 1, tid, value: third });
      expect(await keysOfKind(table, 'P', KIND.CHUNK)).toHaveLength(chunksFor(2 * MiB) + chunksFor(1.5 * MiB));
      expect(((await store.getRender('P', 1, tid))?.value as Buffer).equals(third)).toBe(true);
      // An import's batched write keeps the replaced upload too.
      const fourth = bytes(1_300_000);
      await store.putRenders([{ title: 'P', rev: 1, tid, value: fourth }]);
      expect(await keysOfKind(table, 'P', KIND.CHUNK)).toHaveLength(chunksFor(1.5 * MiB) + chunksFor(1_300_000));
      expect(((await store.getRender('P', 1, tid))?.value as Buffer).equals(fourth)).toBe(true);
      // A repeat in one import goes in the next update and keeps the upload of the render it replaces.
      const [fifth, sixth] = [bytes(3 * MiB), bytes(1_100_000)];
      await store.putRenders([
        { title: 'P', rev: 1, tid, value: fifth },
        { title: 'P', rev: 1, tid, value: sixth },
      ]);
      expect(await keysOfKind(table, 'P', KIND.CHUNK)).toHaveLength(chunksFor(3 * MiB) + chunksFor(1_100_000));
      expect(((await store.getRender('P', 1, tid))?.value as Buffer).equals(sixth)).toBe(true);
      await store.putRender({ title: 'P', rev: 1, tid, value: 'small now' });
      expect(await keysOfKind(table, 'P', KIND.CHUNK)).toEqual([]);
      expect((await store.getRender('P', 1, tid))?.value).toBe('small now');
    });

    it('reads a whole render when the same (rev, tid) is rewritten between reading its record and its chunks, every time', async () => {
      const { store, table, clock } = await ctx.store();
      const tid = tidAt(T0);
      const version = (n: number) => ({ value: Buffer.alloc(1_200_000 + n * 1000, n), parts: { n: String(n), tail: Buffer.alloc(300_000, n) } });
      await store.putRender({ title: 'P', rev: 1, tid, ...version(0) });
      // The reader's table lands one rewrite (through the plain table) before each of its chunk reads:
      // the lockstep that starved readers when a rewrite removed every other upload's chunks.
      let written = 0;
      const racing = beforeChunkReads(table, () => store.putRender({ title: 'P', rev: 1, tid, ...version(++written) }));
      const reader = new PageRevisionStore(racing, { clock: clock.read });
      for (let i = 0; i < 3; i++) {
        const r = await reader.getRender('P', 1, tid);
        const n = Number(r!.parts.n);
        expect(n).toBe(written - 1);
        expect((r!.value as Buffer).equals(version(n).value)).toBe(true);
        expect((r!.parts.tail as Buffer).equals(version(n).parts.tail)).toBe(true);
      }
      expect(written).toBe(3);
    });

    it('refuses ifAbsent over an existing large render and leaves no chunks behind', { timeout: 120_000 }, async () => {
      const { store, table } = await ctx.store();
      const tid = tidAt(T0);
      const first = bytes(17 * MiB);
      await store.putRender({ title: 'P', rev: 1, tid, value: first }, { ifAbsent: true });
      const err = await rejection(store.putRender({ title: 'P', rev: 1, tid, value: bytes(17 * MiB) }, { ifAbsent: true }));
      expect(err).toBeInstanceOf(RenderExistsError);
      const inline = await rejection(store.putRender({ title: 'P', rev: 1, tid, value: bytes(2 * MiB) }, { ifAbsent: true }));
      expect(inline).toBeInstanceOf(RenderExistsError);
      expect(await keysOfKind(table, 'P', KIND.CHUNK)).toHaveLength(chunksFor(17 * MiB));
      expect(((await store.getRender('P', 1, tid))?.value as Buffer).equals(first)).toBe(true);
    });

    it('culls the chunks of an expired render with its record', async () => {
      const { store, table, clock } = await ctx.store();
      await store.putRender({ title: 'P', rev: 1, tid: tidAt(clock.now), value: bytes(2 * MiB) });
      await store.putRender({ title: 'P', rev: 2, tid: tidAt(clock.now + 1), value: bytes(2 * MiB) });
      clock.advance(DEFAULT_RECENCY_WINDOW_MS + 1);
      await store.putRender({ title: 'P', rev: 3, tid: tidAt(clock.now), value: 'small' });
      expect(await store.getRevision('P', 1)).toBeNull();
      expect(await keysOfKind(table, 'P', KIND.CHUNK)).toHaveLength(chunksFor(2 * MiB));
      expect(((await store.getRevision('P', 2))?.value as Buffer).length).toBe(2 * MiB);
    });

    it('never returns part of a render while the same (rev, tid) is written again and again', async () => {
      const { store } = await ctx.store();
      const tid = tidAt(T0);
      const version = (n: number) => ({ value: Buffer.alloc(1_200_000 + n * 1000, n), parts: { n: String(n), tail: Buffer.alloc(300_000, n) } });
      await store.putRender({ title: 'P', rev: 1, tid, ...version(0) });
      let writing = true;
      const writer = (async () => {
        for (let n = 1; n <= 8; n++) await store.putRender({ title: 'P', rev: 1, tid, ...version(n) });
        writing = false;
      })();
      let reads = 0;
      while (writing || reads < 3) {
        const r = await store.getRender('P', 1, tid);
        const n = Number(r!.parts.n);
        expect((r!.value as Buffer).equals(version(n).value)).toBe(true);
        expect((r!.parts.tail as Buffer).equals(version(n).parts.tail)).toBe(true);
        reads++;
        if (reads > 10_000) break;
      }
      await writer;
      expect(Number((await store.getLatest('P'))!.parts.n)).toBe(8);
    });
  });
}
