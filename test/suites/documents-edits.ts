/**
 * Interactive edits and reads: create, update, delete, re-create, the conflict rules of CouchDB on
 * FoundationDB (seed 001), CouchDB-shaped reads, deterministic revs, and the checks of arguments.
 */
import { describe, expect, it } from 'vitest';
import { DocumentStore, InMemoryKeyValueTable, ObjectClosedError, Serializers } from '../../client';
import { decodeHead, encodeHead } from '../../client/documents/head-codec';
import { documentFamily, HEAD_KEY } from '../../client/documents/key-layout';
import { DocumentsSuiteContext, expectConflict, expectInvalid, hashOf, posOf, rejection, replicated, revOf } from './documents-context';

export function editsSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore.put, remove and get', () => {
    it('creates a document at rev 1 and reads it back CouchDB-style', async () => {
      const { store } = await ctx.store();
      const created = await store.put('doc', { title: 'Hello', tags: ['a', 'b'], n: 1.5, nested: { z: 1, a: null } });
      expect(created.id).toBe('doc');
      expect(created.rev).toMatch(/^1-[0-9a-f]{32}$/);
      expect(await store.get('doc')).toEqual({ _id: 'doc', _rev: created.rev, title: 'Hello', tags: ['a', 'b'], n: 1.5, nested: { z: 1, a: null } });
      expect(await store.get('missing')).toBeNull();
    });

    it('extends the leaf it is given: pos + 1, the parent in _revisions', async () => {
      const { store } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      const two = await store.put('doc', { v: 2 }, { rev: one.rev });
      expect(posOf(two.rev)).toBe(2);
      expect(await store.get('doc', { revs: true })).toEqual({ _id: 'doc', _rev: two.rev, v: 2, _revisions: { start: 2, ids: [hashOf(two.rev), hashOf(one.rev)] } });
    });

    it('refuses to create an existing document without a rev (DocumentConflictError)', async () => {
      const { store } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      await expectConflict(store.put('doc', { v: 2 }), new RegExp(`^document "doc" exists \\(rev ${one.rev}\\): an edit of it must give the rev it extends$`));
      expect(revOf(await store.get('doc'))).toBe(one.rev);
    });

    it('refuses a stale rev, and a second update from the same rev', async () => {
      const { store } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      const two = await store.put('doc', { v: 2 }, { rev: one.rev });
      await expectConflict(store.put('doc', { v: 3 }, { rev: one.rev }), new RegExp(`^document "doc" has no leaf ${one.rev}: the rev is stale or unknown$`));
      await expectConflict(store.put('doc', { v: 3 }, { rev: '1-00000000000000000000000000000000' }), /has no leaf 1-0{32}/);
      await expectConflict(store.put('other', { v: 3 }, { rev: one.rev }), /^document "other" has no leaf/);
      expect(await store.get('doc')).toEqual({ _id: 'doc', _rev: two.rev, v: 2 });
    });

    it('deletes: the document reads as null, its deleted leaf by rev as _deleted', async () => {
      const { store } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      const gone = await store.remove('doc', one.rev);
      expect(posOf(gone.rev)).toBe(2);
      expect(await store.get('doc')).toBeNull();
      expect(await store.get('doc', { rev: gone.rev })).toEqual({ _id: 'doc', _rev: gone.rev, _deleted: true });
      expect(await store.get('doc', { rev: gone.rev, revs: true })).toEqual({ _id: 'doc', _rev: gone.rev, _deleted: true, _revisions: { start: 2, ids: [hashOf(gone.rev), hashOf(one.rev)] } });
    });

    it('re-creates a deleted document by extending its deleted branch', async () => {
      const { store } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      const gone = await store.remove('doc', one.rev);
      const again = await store.put('doc', { v: 'again' });
      expect(posOf(again.rev)).toBe(3);
      expect(await store.get('doc', { revs: true, conflicts: true, deletedConflicts: true })).toEqual({
        _id: 'doc',
        _rev: again.rev,
        v: 'again',
        _revisions: { start: 3, ids: [hashOf(again.rev), hashOf(gone.rev), hashOf(one.rev)] },
      });
    });

    it('creates a document as deleted; creating it as deleted again without a rev is a conflict', async () => {
      const { store } = await ctx.store();
      const tomb = await store.put('doc', { reason: 'spam' }, { deleted: true });
      expect(posOf(tomb.rev)).toBe(1);
      expect(await store.get('doc')).toBeNull();
      expect(await store.get('doc', { rev: tomb.rev })).toEqual({ _id: 'doc', _rev: tomb.rev, _deleted: true, reason: 'spam' });
      await expectConflict(store.put('doc', {}, { deleted: true }), new RegExp(`^document "doc" is deleted \\(rev ${tomb.rev}\\): it cannot be created as deleted again$`));
      expect(posOf((await store.put('doc', { back: true })).rev)).toBe(2);
    });

    it('refuses to edit a deleted leaf, by put and by remove', async () => {
      const { store } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      const gone = await store.remove('doc', one.rev);
      await expectConflict(
        store.put('doc', { v: 2 }, { rev: gone.rev }),
        new RegExp(`^rev ${gone.rev} of document "doc" is a deleted leaf: edit a live leaf, or re-create the document without a rev$`),
      );
      await expectConflict(store.remove('doc', gone.rev), /is a deleted leaf/);
      await expectConflict(store.remove('doc', one.rev), /has no leaf/);
    });

    it('reads a leaf by rev, and null for a non-leaf rev (its body is not kept) or an unknown one', async () => {
      const { store } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      const two = await store.put('doc', { v: 2 }, { rev: one.rev });
      expect(await store.get('doc', { rev: two.rev })).toEqual({ _id: 'doc', _rev: two.rev, v: 2 });
      expect(await store.get('doc', { rev: one.rev })).toBeNull();
      expect(await store.get('doc', { rev: '9-abc' })).toBeNull();
    });

    it('gives the same edit the same rev on two tables, and different edits different revs', async () => {
      const a = (await ctx.store()).store;
      const b = new DocumentStore(new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 3 }));
      const [ra, rb] = [await a.put('doc', { x: 1, y: [1, 2] }), await b.put('doc', { y: [1, 2], x: 1 })];
      expect(ra.rev).toBe(rb.rev);
      const [na, nb] = [await a.put('doc', { x: 2 }, { rev: ra.rev }), await b.put('doc', { x: 2 }, { rev: rb.rev })];
      expect(na.rev).toBe(nb.rev);
      expect((await b.put('doc2', { x: 1, y: [2, 1] })).rev).not.toBe(ra.rev);
      expect((await b.put('doc3', { x: 1 }, { deleted: true })).rev).not.toBe((await b.put('doc4', { x: 1 })).rev);
    });

    it('checks its arguments, naming the field and the limit', async () => {
      const { store } = await ctx.store();
      await expectInvalid(store.put('', { v: 1 }), 'id must be a non-empty string, got ""');
      await expectInvalid(store.put('_secret', { v: 1 }), 'id "_secret" starts with "_": only "_design/" ids may');
      await expectInvalid(store.put('doc', [] as never), 'the body of document "doc" must be a JSON object, got an array');
      await expectInvalid(store.put('doc', { _id: 'doc' }), 'the body of document "doc" has the member "_id": members starting with "_" are reserved');
      await expectInvalid(store.put('doc', { n: NaN }), 'the body of document "doc": n is NaN; JSON numbers must be finite');
      await expectInvalid(store.put('doc', { f: () => 1 }), 'the body of document "doc": f is a function, which JSON cannot hold');
      await expectInvalid(store.put('doc', { v: 1 }, { rev: '1' }), 'rev "1" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)');
      await expectInvalid(store.put('doc', { v: 1 }, { rev: '3000000000-abc' }), 'rev "3000000000-abc" has position 3000000000; the maximum is 2147483647');
      await expectInvalid(store.put('doc', { v: 1 }, { deleted: 'yes' as never }), 'deleted must be a boolean, got "yes"');
      await expectInvalid(store.remove('doc', 'x-1'), 'rev "x-1" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)');
      await expectInvalid(store.get('doc', { rev: 'nope' }), 'rev "nope" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)');
      await expectInvalid(store.get('doc', { conflicts: 1 as never }), 'conflicts must be a boolean, got 1');
      expect((await store.changes()).results).toEqual([]);
      expect((await store.put('_design/app', { views: {} })).rev).toMatch(/^1-/);
    });

    it("reads the winner's current body after an edit of a losing branch, a deletion of the winner, a re-creation and a winning replicated branch", async () => {
      const { store } = await ctx.store();
      const winnerOf = async () => {
        const doc = await store.get('doc');
        const listed = (await store.allDocs({ keys: ['doc'], includeDocs: true })).rows[0].doc ?? null;
        expect(listed).toEqual(doc);
        return doc;
      };
      await store.bulkDocs([replicated('doc', 3, ['c', 'b', 'a'], { v: 'c' }), replicated('doc', 1, ['z'], { v: 'z' })], { newEdits: false });
      expect(await winnerOf()).toEqual({ _id: 'doc', _rev: '3-c', v: 'c' });
      // An edit of the losing branch (to 2-…) leaves 3-c the winner, with its body.
      const loser = await store.put('doc', { v: 'z2' }, { rev: '1-z' });
      expect(await winnerOf()).toEqual({ _id: 'doc', _rev: '3-c', v: 'c' });
      // Deleting the winner promotes the runner-up, with its body.
      await store.remove('doc', '3-c');
      expect(await winnerOf()).toEqual({ _id: 'doc', _rev: loser.rev, v: 'z2' });
      const gone = await store.remove('doc', loser.rev);
      expect(await winnerOf()).toBeNull();
      const again = await store.put('doc', { v: 'again' });
      expect(await winnerOf()).toEqual({ _id: 'doc', _rev: again.rev, v: 'again' });
      await store.bulkDocs([replicated('doc', 9, ['w'], { v: 'w' })], { newEdits: false });
      expect(await store.get('doc', { conflicts: true, deletedConflicts: true })).toEqual({ _id: 'doc', _rev: '9-w', v: 'w', _conflicts: [again.rev], _deleted_conflicts: [gone.rev] });
      expect(await winnerOf()).toEqual({ _id: 'doc', _rev: '9-w', v: 'w' });
    });

    it('reads a document whose head keeps no body (as heads once were) from its winning leaf, and keeps the body again after an edit', async () => {
      const { store, table } = await ctx.store();
      const one = await store.put('doc', { v: 1 });
      const family = documentFamily('doc');
      const head = decodeHead((await table.get(family, HEAD_KEY))!.value);
      expect(head.body).toBe('{"v":1}');
      await table.put(family, HEAD_KEY, encodeHead({ ...head, body: null }));
      expect(await store.get('doc')).toEqual({ _id: 'doc', _rev: one.rev, v: 1 });
      expect((await store.allDocs({ includeDocs: true })).rows.map((r) => r.doc)).toEqual([{ _id: 'doc', _rev: one.rev, v: 1 }]);
      const two = await store.put('doc', { v: 2 }, { rev: one.rev });
      expect(decodeHead((await table.get(family, HEAD_KEY))!.value).body).toBe('{"v":2}');
      expect(await store.get('doc')).toEqual({ _id: 'doc', _rev: two.rev, v: 2 });
    });

    it('throws ObjectClosedError after close, and close is idempotent', async () => {
      const { store } = await ctx.store();
      await store.close();
      await store.close();
      const err = await rejection(store.get('doc'));
      expect(err).toBeInstanceOf(ObjectClosedError);
      expect([err.code, err.message]).toEqual(['OBJECT_CLOSED', 'DocumentStore is closed']);
    });
  });
}
