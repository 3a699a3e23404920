/**
 * Local documents (CouchDB's `_local/<id>`, where replicators keep their checkpoints): revs `0-<n>`
 * checked on every write, never in the changes feed nor in allDocs, bad input refused by name.
 */
import { describe, expect, it } from 'vitest';
import { DocumentConflictError, MAX_DOCUMENT_BYTES } from '../../client';
import { DocumentsSuiteContext, expectConflict, expectInvalid } from './documents-context';

export function localSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore local documents', () => {
    it('creates, replaces at its rev and removes a local document, counting its writes in the rev', async () => {
      const { store } = await ctx.store();
      expect(await store.getLocal('checkpoint')).toBeNull();
      expect(await store.putLocal('checkpoint', { last_seq: 'a', history: [{ n: 1 }] })).toEqual({ id: '_local/checkpoint', rev: '0-1' });
      expect(await store.getLocal('checkpoint')).toEqual({ _id: '_local/checkpoint', _rev: '0-1', last_seq: 'a', history: [{ n: 1 }] });
      expect(await store.putLocal('checkpoint', { last_seq: 'b' }, { rev: '0-1' })).toEqual({ id: '_local/checkpoint', rev: '0-2' });
      expect(await store.getLocal('checkpoint')).toEqual({ _id: '_local/checkpoint', _rev: '0-2', last_seq: 'b' });
      expect(await store.removeLocal('checkpoint', '0-2')).toBe(true);
      expect(await store.getLocal('checkpoint')).toBeNull();
      expect(await store.removeLocal('checkpoint', '0-2')).toBe(false);
      // Created again, it counts from 1.
      expect((await store.putLocal('checkpoint', {})).rev).toBe('0-1');
    });

    it('refuses a write without the current rev with DocumentConflictError, and of two writers at one rev lets one win', async () => {
      const { store, another } = await ctx.store();
      await store.putLocal('cp', { v: 1 });
      await expectConflict(store.putLocal('cp', { v: 2 }), /^local document "cp": it exists; give its _rev to replace it$/);
      await expectConflict(store.putLocal('cp', { v: 2 }, { rev: '0-7' }), /^local document "cp": it is at rev 0-1, not 0-7$/);
      await expectConflict(store.putLocal('missing', { v: 2 }, { rev: '0-1' }), /^local document "missing": it does not exist \(rev 0-1 was given\)$/);
      await expectConflict(store.removeLocal('cp', '0-3'), /^local document "cp": it is at rev 0-1, not 0-3$/);
      const other = another();
      const outcomes = await Promise.allSettled([store.putLocal('cp', { by: 'a' }, { rev: '0-1' }), other.putLocal('cp', { by: 'b' }, { rev: '0-1' })]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const failed = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(failed.reason).toBeInstanceOf(DocumentConflictError);
      expect((await store.getLocal('cp'))?._rev).toBe('0-2');
      await other.close();
    });

    it('of a remover and a writer at one rev lets exactly one win: a stale remover never deletes a newer checkpoint', async () => {
      const { store, another } = await ctx.store();
      const other = another();
      for (let round = 0; round < 10; round++) {
        const { rev } = await store.putLocal(`cp-${round}`, { round });
        const write = () => store.putLocal(`cp-${round}`, { round, next: true }, { rev });
        const remove = () => other.removeLocal(`cp-${round}`, rev);
        const outcomes = await Promise.allSettled(round % 2 === 0 ? [write(), remove()] : [remove(), write()]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(DocumentConflictError);
        const written = outcomes.some((o) => o.status === 'fulfilled' && typeof o.value === 'object');
        expect(await store.getLocal(`cp-${round}`)).toEqual(written ? { _id: `_local/cp-${round}`, _rev: '0-2', round, next: true } : null);
      }
      await other.close();
    });

    it('keeps local documents out of the changes feed, allDocs and the documents of the same id', async () => {
      const { store } = await ctx.store();
      await store.put('same', { doc: true });
      await store.putLocal('same', { local: true });
      await store.putLocal('other', { local: true });
      expect((await store.changes()).results.map((r) => r.id)).toEqual(['same']);
      expect((await store.allDocs()).rows.map((r) => r.id)).toEqual(['same']);
      expect(await store.get('same')).toEqual({ _id: 'same', _rev: expect.stringMatching(/^1-/), doc: true });
      expect(await store.getLocal('same')).toEqual({ _id: '_local/same', _rev: '0-1', local: true });
    });

    it('refuses bad ids, revs and bodies by name, writing nothing', async () => {
      const { store } = await ctx.store();
      await expectInvalid(store.getLocal(''), 'id must be a non-empty string, got ""');
      await expectInvalid(store.putLocal('x'.repeat(2047), {}), 'id is 2047 bytes; the maximum is 2046');
      await expectInvalid(store.putLocal('cp', {}, { rev: '1-abc' }), 'rev "1-abc" is not a local document rev; expected "0-<n>" (n 1 to 4294967295)');
      await expectInvalid(store.removeLocal('cp', 'zero'), 'rev "zero" is not a local document rev; expected "0-<n>" (n 1 to 4294967295)');
      await expectInvalid(store.putLocal('cp', { _id: 'x' }), 'the body of local document "cp" has the member "_id": members starting with "_" are reserved');
      await expectInvalid(
        store.putLocal('cp', { big: 'x'.repeat(MAX_DOCUMENT_BYTES) }),
        `local document "cp" is ${MAX_DOCUMENT_BYTES + 14} bytes; the maximum is ${MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)`,
      );
      expect(await store.getLocal('cp')).toBeNull();
    });
  });
}
