import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, MetadataStore } from '../../../controller/metadata/metadata-store';
import { IllegalTableStateTransitionError } from '../../../controller/metadata/table-state';
import { failNextArrayBatch } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';

const dirs: Array<{ dispose(): void }> = [];
const open: MetadataStore[] = [];

async function openStore(dir: string): Promise<MetadataStore> {
  const store = await MetadataStore.open(dir);
  open.push(store);
  return store;
}

function newDir(): string {
  const d = tempDir('kvt-meta-');
  dirs.push(d);
  return path.join(d.path, 'controller');
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) d.dispose();
});

describe('MetadataStore', () => {
  it('stops writing after a failed write (fail-stop): later writes are refused UNAVAILABLE, reads keep the durable state, a reopen recovers', async () => {
    const dir = newDir();
    const failures: unknown[] = [];
    const a = await openStore(dir);
    a.onFailure = (err) => failures.push(err);
    expect(await a.createScope('kept', 1)).toBe(true);
    {
      using _fault = failNextArrayBatch('injected write failure');
      await expect(a.createScope('lost', 2)).rejects.toThrow('injected write failure');
    }
    expect(failures.map((e) => (e as Error).message)).toEqual(['injected write failure']);
    const refused = { code: 'UNAVAILABLE', message: 'controller metadata storage failed (injected write failure); restart the controller to recover' };
    await expect(a.createScope('later', 3)).rejects.toMatchObject(refused);
    await expect(a.bumpGeneration()).rejects.toMatchObject(refused);
    expect(a.listScopes()).toEqual(['kept']);
    await a.close();
    expect(failures).toHaveLength(1);

    const b = await openStore(dir);
    expect(b.listScopes()).toEqual(['kept']);
    expect(await b.createScope('later', 4)).toBe(true);
  });

  it('keeps scopes, tables, stores, the counter and the generation across a reopen', async () => {
    const dir = newDir();
    const a = await openStore(dir);
    expect(await a.createScope('wiki', 1)).toBe(true);
    expect(await a.createScope('wiki', 2)).toBe(false);
    await a.upsertStore('s1', '127.0.0.1:1000', 3);
    const created = await a.createTable({ scope: 'wiki', table: 'pages', owners: ['s1', 's1'], nowMs: 4 });
    expect(created.kind).toBe('created');
    await a.transitionTable('wiki', 'pages', 'ACTIVE');
    const generation = a.generation;
    await a.close();

    const b = await openStore(dir);
    expect(b.listScopes()).toEqual(['wiki']);
    expect(b.getTable('wiki', 'pages')).toEqual({
      scope: 'wiki',
      table: 'pages',
      partitionCount: 2,
      state: 'ACTIVE',
      createdAtMs: 4,
      partitions: [
        { index: 0, segmentId: '1', storeId: 's1' },
        { index: 1, segmentId: '2', storeId: 's1' },
      ],
    });
    expect(b.getStore('s1')).toEqual({ storeId: 's1', address: '127.0.0.1:1000', lastHeartbeatMs: 3 });
    expect(b.generation).toBe(generation);
    expect(b.segmentCountsByStore().get('s1')).toBe(2);
  });

  it('never reuses segment ids, even for a re-created table after a reopen', async () => {
    const dir = newDir();
    const a = await openStore(dir);
    await a.createScope('s', 0);
    await a.createTable({ scope: 's', table: 't', owners: ['x'], nowMs: 0 });
    await a.transitionTable('s', 't', 'DELETING');
    await a.removeTable('s', 't');
    await a.close();
    const b = await openStore(dir);
    const again = await b.createTable({ scope: 's', table: 't', owners: ['x', 'x'], nowMs: 0 });
    expect(again.kind === 'created' && again.table.partitions.map((p) => p.segmentId)).toEqual(['2', '3']);
  });

  it('refuses a table in a missing scope, reports an existing one, and refuses illegal transitions', async () => {
    const m = await openStore(newDir());
    expect((await m.createTable({ scope: 'nope', table: 't', owners: ['x'], nowMs: 0 })).kind).toBe('no-scope');
    await m.createScope('s', 0);
    await m.createTable({ scope: 's', table: 't', owners: ['x'], nowMs: 0 });
    expect((await m.createTable({ scope: 's', table: 't', owners: ['x', 'y'], nowMs: 0 })).kind).toBe('exists');
    await expect(m.removeTable('s', 't')).rejects.toBeInstanceOf(IllegalTableStateTransitionError);
    await m.transitionTable('s', 't', 'DELETING');
    await expect(m.transitionTable('s', 't', 'ACTIVE')).rejects.toBeInstanceOf(IllegalTableStateTransitionError);
    expect(m.getTable('s', 't')?.state).toBe('DELETING');
  });

  it('refuses to delete a scope that holds tables', async () => {
    const m = await openStore(newDir());
    await m.createScope('s', 0);
    await m.createTable({ scope: 's', table: 't', owners: ['x'], nowMs: 0 });
    expect(await m.deleteScope('s')).toBe('not-empty');
    expect(await m.deleteScope('missing')).toBe('missing');
    await m.transitionTable('s', 't', 'DELETING');
    await m.removeTable('s', 't');
    expect(await m.deleteScope('s')).toBe('deleted');
    expect(m.listScopes()).toEqual([]);
  });

  it('bumps the generation when a store is added or moves, not when it re-registers unchanged', async () => {
    const m = await openStore(newDir());
    const g0 = BigInt(m.generation);
    expect(await m.upsertStore('s1', 'h:1', 0)).toEqual({ created: true, addressChanged: false });
    expect(BigInt(m.generation)).toBe(g0 + 1n);
    expect(await m.upsertStore('s1', 'h:1', 1)).toEqual({ created: false, addressChanged: false });
    expect(BigInt(m.generation)).toBe(g0 + 1n);
    expect(await m.upsertStore('s1', 'h:2', 2)).toEqual({ created: false, addressChanged: true });
    expect(BigInt(m.generation)).toBe(g0 + 2n);
  });

  it('removes a store in one batch: CREATING partitions move, ACTIVE ones get replacements, DELETING ones stay; kept across a reopen', async () => {
    const dir = newDir();
    const m = await openStore(dir);
    await m.createScope('s', 0);
    await m.upsertStore('a', 'h:1', 0);
    await m.upsertStore('b', 'h:2', 0);
    const table = async (name: string, owners: string[], state?: 'ACTIVE' | 'DELETING') => {
      await m.createTable({ scope: 's', table: name, owners, nowMs: 0 });
      if (state) await m.transitionTable('s', name, state);
    };
    await table('c', ['a', 'b']); // segments 1, 2
    await table('act', ['a', 'b', 'b'], 'ACTIVE'); // 3, 4, 5
    await table('del', ['b'], 'DELETING'); // 6
    await table('other', ['a'], 'ACTIVE'); // 7
    const basis = m.tablesOnStore('b');
    expect(basis.map((t) => t.table)).toEqual(['act', 'c', 'del']);
    const newOwners = new Map([
      ['s/act#1', 'a'],
      ['s/act#2', 'a'],
      ['s/c#1', 'a'],
    ]);

    // A plan made from other records than the current ones writes nothing.
    expect(await m.removeStore({ storeId: 'b', nowMs: 5, basis: basis.slice(1), newOwners })).toEqual({ kind: 'stale' });
    expect(m.getStore('b')).toBeDefined();

    const outcome = await m.removeStore({ storeId: 'b', nowMs: 5, basis, newOwners });
    const record = {
      storeId: 'b',
      address: 'h:2',
      removedAtMs: 5,
      lost: [
        { scope: 's', table: 'act', index: 1, segmentId: '4', newSegmentId: '8', newStoreId: 'a' },
        { scope: 's', table: 'act', index: 2, segmentId: '5', newSegmentId: '9', newStoreId: 'a' },
      ],
      placed: [{ scope: 's', table: 'c', index: 1, segmentId: '2', newSegmentId: '10', newStoreId: 'a' }],
      deleting: [{ scope: 's', table: 'del' }],
    };
    expect(outcome).toEqual({ kind: 'removed', record });
    const check = (x: MetadataStore) => {
      expect(x.getStore('b')).toBeUndefined();
      expect(x.getRemovedStore('b')).toEqual(record);
      expect(x.storeAddress('b')).toBe('h:2');
      expect(x.getTable('s', 'c')?.partitions[1]).toEqual({ index: 1, segmentId: '10', storeId: 'a' });
      expect(x.getTable('s', 'act')?.partitions.slice(1)).toEqual([
        { index: 1, segmentId: '8', storeId: 'a', replaces: { segmentId: '4', storeId: 'b' } },
        { index: 2, segmentId: '9', storeId: 'a', replaces: { segmentId: '5', storeId: 'b' } },
      ]);
      expect(x.getTable('s', 'del')?.partitions).toEqual([{ index: 0, segmentId: '6', storeId: 'b' }]);
      expect(
        x
          .unfinishedTables()
          .map((t) => t.table)
          .sort(),
      ).toEqual(['act', 'c', 'del']);
    };
    check(m);
    // A placement made before the removal was written cannot use the store.
    await expect(m.createTable({ scope: 's', table: 'late', owners: ['b'], nowMs: 6 })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'segment store b was removed meanwhile; table s/late was not created: try again',
    });
    await m.close();

    const again = await openStore(dir);
    check(again);
    const g = BigInt(again.generation);
    const replacing = again.getTable('s', 'act')!;
    const done = await again.finishReplacements(replacing);
    expect(done.partitions.map((p) => [p.segmentId, p.storeId, p.replaces])).toEqual([
      ['3', 'a', undefined],
      ['8', 'a', undefined],
      ['9', 'a', undefined],
    ]);
    expect(BigInt(again.generation)).toBe(g + 1n);
    expect(
      again
        .unfinishedTables()
        .map((t) => t.table)
        .sort(),
    ).toEqual(['c', 'del']);
    await expect(again.finishReplacements(replacing)).rejects.toThrow('table s/act changed while its replacement segments were created');
    // The counter went past the replacement segments with the removal: no segment id comes twice.
    const later = await again.createTable({ scope: 's', table: 'later', owners: ['a'], nowMs: 7 });
    expect(later.kind === 'created' && later.table.partitions.map((p) => p.segmentId)).toEqual(['11']);
  });

  it('writes nothing for a removal planned from records that changed since, even with the same tables', async () => {
    const m = await openStore(newDir());
    await m.createScope('s', 0);
    await m.upsertStore('a', 'h:1', 0);
    await m.upsertStore('b', 'h:2', 0);
    await m.createTable({ scope: 's', table: 't', owners: ['b'], nowMs: 0 });
    const basis = m.tablesOnStore('b');
    // Planned while t was CREATING (its partition would simply move); t became ACTIVE meanwhile.
    await m.transitionTable('s', 't', 'ACTIVE');
    expect(await m.removeStore({ storeId: 'b', nowMs: 1, basis, newOwners: new Map([['s/t#0', 'a']]) })).toEqual({ kind: 'stale' });
    expect(m.getStore('b')).toBeDefined();
    expect(m.getRemovedStore('b')).toBeUndefined();
    expect(m.getTable('s', 't')?.partitions).toEqual([{ index: 0, segmentId: '1', storeId: 'b' }]);
  });

  it('fails with DataDirInUseError when the directory is already open', async () => {
    const dir = newDir();
    await openStore(dir);
    await expect(MetadataStore.open(dir)).rejects.toThrow(new DataDirInUseError(dir).message);
  });
});
