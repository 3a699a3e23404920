/**
 * The block archive's own rules on KvtArchiveStore over the in-memory table, beyond the conformance
 * suite: revs above 32 bits, the limits of what it takes, the cache of open blocks' images, and a
 * block whose pending records were lost (never sealed without them).
 */
import { describe, expect, it } from 'vitest';
import { ArchiveCorruptedError, CassandraArchiveStore, InMemoryKeyValueTable, InvalidArgumentError, KvtArchiveStore, Serializers } from '../../../client';
import type { ArchivedRender } from '../../../client';
import { pendingKey } from '../../../client/archive/kvt-archive-keys';
import { expected, rejection, renders, timeUuid } from '../../suites/archive-context';

let tables = 0;

function memoryTable(): InMemoryKeyValueTable<Uint8Array, Uint8Array> {
  return new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 2, name: `memory/block-archive-${++tables}` });
}

describe('BlockArchive (KvtArchiveStore on the in-memory table)', () => {
  it('never mixes up revs 2^32 apart, in the index or in the open block', async () => {
    await using store = new KvtArchiveStore(memoryTable(), { blockRevisions: 4 });
    const low: ArchivedRender = { title: 'Wide', rev: 1, tid: timeUuid(1_700_000_000_000), value: 'low' };
    const high: ArchivedRender = { title: 'Wide', rev: 2 ** 32 + 1, tid: timeUuid(1_700_000_001_000), value: 'high' };
    expect(await store.append([low, high])).toEqual({ appended: 2, alreadyArchived: 0 });
    expect(await store.get('Wide', 1)).toEqual(expected(low));
    expect(await store.get('Wide', 2 ** 32 + 1)).toEqual(expected(high));
    expect(await store.get('Wide', 1, high.tid)).toBeNull();
    await store.flush();
    expect(await store.get('Wide', 1)).toEqual(expected(low));
    expect(await store.get('Wide', 2 ** 32 + 1)).toEqual(expected(high));
  });

  it('refuses a rev above 2^53 - 1 and a part that is neither text nor bytes, naming the render, before writing anything', async () => {
    await using store = new KvtArchiveStore(memoryTable());
    const [good] = renders('Checked', 1);
    const cases: [ArchivedRender, string][] = [
      [{ ...good, rev: 2 ** 53 }, 'renders[1].rev is 9007199254740992; it must be an integer from 0 to 9007199254740991'],
      [{ ...good, parts: { p: 5 as unknown as string } }, 'renders[1].parts["p"] is number; it must be a string or a Uint8Array'],
      [{ ...good, parts: { p: { length: 1 } as unknown as Uint8Array } }, 'renders[1].parts["p"] is object; it must be a string or a Uint8Array'],
    ];
    for (const [bad, message] of cases) {
      const err = await rejection(store.append([good, bad]));
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect(err).toMatchObject({ code: 'INVALID_ARGUMENT', index: 1, message });
    }
    expect((await store.stats()).revisions).toBe(0);
  });

  it('reads a render appended after the open block’s image was read and cached', async () => {
    await using store = new KvtArchiveStore(memoryTable(), { blockRevisions: 10 });
    const all = renders('Growing', 4);
    await store.append(all.slice(0, 2));
    await store.flush(); // revs 1-2 into block 0's image
    expect(await store.get('Growing', 1)).toEqual(expected(all[0])); // the image is now cached
    await store.append(all.slice(2, 3)); // rev 3 pending in block 0
    expect(await store.get('Growing', 3)).toEqual(expected(all[2]));
    await store.flush(); // a new image of block 0: revs 1-3
    await store.append(all.slice(3));
    for (const r of all) expect(await store.get(r.title, r.rev)).toEqual(expected(r));
    expect(await store.locate('Growing', 3)).toMatchObject({ block: 0, sealed: false });
  });

  it('refuses to seal a block whose pending record is gone, reporting the damage instead of sealing without it', async () => {
    const table = memoryTable();
    // (Without a flush on close: the page stays damaged, so a flush would report it again.)
    await using store = new KvtArchiveStore(table, { blockRevisions: 3, flushOnClose: false });
    const all = renders('Lost', 3);
    await store.append(all.slice(0, 2));
    await table.remove('Lost', pendingKey(0, 1, all[0].tid, 0));
    const err = await rejection(store.append(all.slice(2)));
    expect(err).toBeInstanceOf(ArchiveCorruptedError);
    expect(err).toMatchObject({ title: 'Lost', block: 0 });
    expect(err.message).toBe('archive block 0 of page "Lost" is corrupted: the open block holds 2 distinct renders; the page\'s metadata says 3');
    expect(await store.stats('Lost')).toMatchObject({ revisions: 3, sealedBlocks: 0 });
  });
});

describe('CassandraArchiveStore options', () => {
  it('refuses a keyspace that is not 1 to 48 of [A-Za-z0-9_] before connecting (it is quoted into CQL)', () => {
    for (const keyspace of ['ks"; DROP KEYSPACE system; --', 'with-dash', '', 'k'.repeat(49)]) {
      expect(() => new CassandraArchiveStore({ contactPoints: ['127.0.0.1'], keyspace })).toThrow(InvalidArgumentError);
      expect(() => new CassandraArchiveStore({ contactPoints: ['127.0.0.1'], keyspace })).toThrow(`keyspace is ${JSON.stringify(keyspace)}; it must be 1 to 48 of [A-Za-z0-9_]`);
    }
    expect(() => new CassandraArchiveStore({ contactPoints: ['127.0.0.1'], keyspace: 'K_48'.repeat(12) })).not.toThrow();
  });
});
