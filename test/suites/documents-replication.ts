/**
 * Replication writes (`bulkDocs` with `newEdits: false`), the winner rule over branches, conflicts
 * and deleted conflicts, revsDiff, and interactive bulks.
 */
import { describe, expect, it } from 'vitest';
import { DocumentConflictError } from '../../client';
import { DocumentsSuiteContext, expectInvalid, hashOf, replicated } from './documents-context';

export function replicationSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore.bulkDocs with newEdits: false', () => {
    it('stores a replicated document as sent, with its path', async () => {
      const { store } = await ctx.store();
      const results = await store.bulkDocs([replicated('doc', 3, ['c', 'b', 'a'], { v: 3 })], { newEdits: false });
      expect(results).toEqual([{ id: 'doc', rev: '3-c' }]);
      expect(await store.get('doc', { revs: true })).toEqual({ _id: 'doc', _rev: '3-c', v: 3, _revisions: { start: 3, ids: ['c', 'b', 'a'] } });
      // Without _revisions, the rev alone.
      await store.bulkDocs([{ _id: 'single', _rev: '5-x', v: 5 }], { newEdits: false });
      expect(await store.get('single', { revs: true })).toEqual({ _id: 'single', _rev: '5-x', v: 5, _revisions: { start: 5, ids: ['x'] } });
    });

    it('settles branches by (pos, hash): a lower hash loses, a higher one wins, a longer branch extends', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('doc', 1, ['a'], { v: '1-a' }), replicated('doc', 2, ['c', 'a'], { v: '2-c' })], { newEdits: false });
      await store.bulkDocs([replicated('doc', 2, ['b', 'a'], { v: '2-b' })], { newEdits: false });
      expect(await store.get('doc', { conflicts: true })).toEqual({ _id: 'doc', _rev: '2-c', v: '2-c', _conflicts: ['2-b'] });
      await store.bulkDocs([replicated('doc', 2, ['d', 'a'], { v: '2-d' })], { newEdits: false });
      expect(await store.get('doc', { conflicts: true })).toEqual({ _id: 'doc', _rev: '2-d', v: '2-d', _conflicts: ['2-c', '2-b'] });
      await store.bulkDocs([replicated('doc', 3, ['e', 'b', 'a'], { v: '3-e' })], { newEdits: false });
      expect(await store.get('doc', { conflicts: true, revs: true })).toEqual({ _id: 'doc', _rev: '3-e', v: '3-e', _conflicts: ['2-d', '2-c'], _revisions: { start: 3, ids: ['e', 'b', 'a'] } });
      // 2-b is an inner node now: its body is not kept.
      expect(await store.get('doc', { rev: '2-b' })).toBeNull();
      expect(await store.get('doc', { rev: '2-c' })).toEqual({ _id: 'doc', _rev: '2-c', v: '2-c' });
    });

    it('is a no-op for the same bulk twice: same tree, no new change', async () => {
      const { store } = await ctx.store();
      const bulk = [replicated('doc', 2, ['b', 'a'], { v: 2 }), replicated('doc', 2, ['c', 'a'], { v: 'c' }), replicated('other', 1, ['z'], { w: 1 })];
      await store.bulkDocs(bulk, { newEdits: false });
      const first = await store.changes();
      const before = await store.get('doc', { conflicts: true, revs: true });
      expect(await store.bulkDocs(bulk, { newEdits: false })).toEqual([
        { id: 'doc', rev: '2-b' },
        { id: 'doc', rev: '2-c' },
        { id: 'other', rev: '1-z' },
      ]);
      expect(await store.get('doc', { conflicts: true, revs: true })).toEqual(before);
      expect((await store.changes({ since: first.lastSeq })).results).toEqual([]);
      // An ancestor already known is a no-op too.
      await store.bulkDocs([replicated('doc', 1, ['a'], { v: 'old' })], { newEdits: false });
      expect((await store.changes({ since: first.lastSeq })).results).toEqual([]);
    });

    it('makes a losing branch win when an edit takes it to a higher pos', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('doc', 2, ['b', 'a'], { v: 'b' }), replicated('doc', 2, ['c', 'a'], { v: 'c' })], { newEdits: false });
      expect((await store.get('doc'))?._rev).toBe('2-c');
      const edit = await store.put('doc', { v: 'b2' }, { rev: '2-b' });
      expect(await store.get('doc', { conflicts: true, revs: true })).toEqual({
        _id: 'doc',
        _rev: edit.rev,
        v: 'b2',
        _conflicts: ['2-c'],
        _revisions: { start: 3, ids: [hashOf(edit.rev), 'b', 'a'] },
      });
      const feed = await store.changes();
      expect(feed.results.map((r) => [r.id, r.rev, r.deleted])).toEqual([['doc', edit.rev, false]]);
    });

    it('promotes the next live branch when the winner is deleted; conflicts and deletedConflicts apart', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('doc', 2, ['b', 'a'], { v: 'b' }), replicated('doc', 2, ['c', 'a'], { v: 'c' }), replicated('doc', 2, ['d', 'a'], {}, true)], { newEdits: false });
      expect(await store.get('doc', { conflicts: true })).toEqual({ _id: 'doc', _rev: '2-c', v: 'c', _conflicts: ['2-b'] });
      expect(await store.get('doc', { deletedConflicts: true })).toEqual({ _id: 'doc', _rev: '2-c', v: 'c', _deleted_conflicts: ['2-d'] });
      const gone = await store.remove('doc', '2-c');
      expect(await store.get('doc', { conflicts: true, deletedConflicts: true })).toEqual({ _id: 'doc', _rev: '2-b', v: 'b', _deleted_conflicts: [gone.rev, '2-d'] });
      expect((await store.changes()).results.map((r) => [r.rev, r.deleted])).toEqual([['2-b', false]]);
      const last = await store.remove('doc', '2-b');
      expect(await store.get('doc')).toBeNull();
      expect((await store.changes()).results.map((r) => [r.rev, r.deleted])).toEqual([[last.rev > gone.rev ? last.rev : gone.rev, true]]);
    });

    it('merges a path with no common ancestor as a conflict, and continues a path below its oldest rev', async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('doc', 3, ['c', 'b', 'a'], { v: 'c' })], { newEdits: false });
      await store.bulkDocs([replicated('doc', 2, ['y', 'x'], { v: 'y' })], { newEdits: false });
      expect(await store.get('doc', { conflicts: true })).toEqual({ _id: 'doc', _rev: '3-c', v: 'c', _conflicts: ['2-y'] });
      // A path of two (4-d, 3-c) extends 3-c and keeps the history below it.
      await store.bulkDocs([replicated('doc', 4, ['d', 'c'], { v: 'd' })], { newEdits: false });
      expect(await store.get('doc', { revs: true })).toEqual({ _id: 'doc', _rev: '4-d', v: 'd', _revisions: { start: 4, ids: ['d', 'c', 'b', 'a'] } });
    });

    it('checks the whole bulk before writing anything', async () => {
      const { store } = await ctx.store();
      const good = replicated('good', 1, ['a'], { v: 1 });
      await expectInvalid(store.bulkDocs([good, { _id: 'bad', v: 1 }], { newEdits: false }), 'docs[1]._rev is required with newEdits: false');
      await expectInvalid(
        store.bulkDocs([good, { _id: 'bad', _rev: '2-b', _revisions: { start: 3, ids: ['b'] } }], { newEdits: false }),
        'docs[1]._revisions.start is 3; it must be the position of _rev (2)',
      );
      await expectInvalid(
        store.bulkDocs([good, { _id: 'bad', _rev: '2-b', _revisions: { start: 2, ids: ['c'] } }], { newEdits: false }),
        'docs[1]._revisions.ids must start with the hash of _rev (b)',
      );
      await expectInvalid(
        store.bulkDocs([good, { _id: 'bad', _rev: '1-b', _revisions: { start: 1, ids: ['b', 'a'] } }], { newEdits: false }),
        'docs[1]._revisions.ids has 2 revisions; a path ending at position 1 has at most 1',
      );
      await expectInvalid(
        store.bulkDocs([good, { _id: 'bad', _rev: '2-b', _revisions: { start: 2, ids: ['b', 'a-1'] } }], { newEdits: false }),
        'docs[1]._revisions.ids[1] "a-1" is not a revision hash; expected letters and digits',
      );
      await expectInvalid(store.bulkDocs([good, { _id: 7 }] as never, { newEdits: false }), 'docs[1]._id must be a non-empty string, got 7');
      await expectInvalid(
        store.bulkDocs([good, { _id: 'bad', _rev: '1-a', _attachments: {} }], { newEdits: false }),
        'the body of document "bad" has the member "_attachments": members starting with "_" are reserved',
      );
      await expectInvalid(store.bulkDocs([good], { newEdits: 'no' as never }), 'newEdits must be a boolean, got "no"');
      await expectInvalid(store.bulkDocs({} as never), 'docs must be an array, got an object');
      expect(await store.get('good')).toBeNull();
      expect((await store.changes()).results).toEqual([]);
    });
  });

  describe('DocumentStore.revsDiff', () => {
    it("answers which revs are missing, as CouchDB's _revs_diff", async () => {
      const { store } = await ctx.store();
      await store.bulkDocs([replicated('doc', 3, ['c', 'b', 'a'], { v: 1 }), replicated('doc', 2, ['x', 'a'], { v: 2 }), replicated('full', 1, ['f'])], { newEdits: false });
      expect(await store.revsDiff({ doc: ['3-c', '2-b', '1-a', '2-x', '4-d', '2-q'], full: ['1-f'], unknown: ['1-u', '2-v'] })).toEqual({
        doc: { missing: ['4-d', '2-q'], possible_ancestors: ['2-x', '3-c'] },
        unknown: { missing: ['1-u', '2-v'] },
      });
      expect(await store.revsDiff({})).toEqual({});
      await expectInvalid(store.revsDiff({ doc: ['1'] }), 'revs["doc"][0] "1" is not a revision id; expected "<pos>-<hash>" (pos 1 to 2147483647, hash letters and digits)');
      await expectInvalid(store.revsDiff({ doc: '1-a' as never }), 'revs["doc"] must be an array of revs, got "1-a"');
    });
  });

  describe('DocumentStore.bulkDocs with newEdits: true', () => {
    it('applies each document as an interactive edit, a conflict as its error', async () => {
      const { store } = await ctx.store();
      const one = await store.put('a', { v: 1 });
      const results = await store.bulkDocs([
        { _id: 'a', _rev: one.rev, v: 2 },
        { _id: 'b', v: 1 },
        { _id: 'c', _rev: '1-nothere', v: 1 },
        { _id: 'a2', _deleted: true },
      ]);
      expect(results.map((r) => [r.id, r.error?.constructor.name ?? 'ok'])).toEqual([
        ['a', 'ok'],
        ['b', 'ok'],
        ['c', DocumentConflictError.name],
        ['a2', 'ok'],
      ]);
      expect(await store.get('a')).toEqual({ _id: 'a', _rev: results[0].rev, v: 2 });
      expect(await store.get('a2')).toBeNull();
    });
  });
}
