/**
 * The CouchDB endpoint with a real PouchDB (issue 34): `kvt couch` as a process beside a controller
 * and two segment stores, PouchDB 9 on LevelDB replicating through it unmodified — 2,000 documents
 * of 3 edits each into kvt and back out into an empty database, deletions both ways, conflicts made
 * on both sides and settled by a two-way sync, a live replication that picks up writes made
 * through the TypeScript API, and tables made or deleted in the scope through the API (not listed
 * unless their names are database names; a deleted database served as missing, then made again).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentStore, KeyValueTableFactory, KeyValueTableManager, Serializers } from '../../client';
import type { Pouch } from '../../bench/couch/pouch';
import { KvtProcess, TestCluster } from '../harness/process';
import { eventually, expectSameDatabases, PouchDatabases, snapshot, startCouch, statusOf } from './couch-helpers';

const DOCUMENTS = 2000;
const EDITS = 3;
const SCOPE = 'couch-replication';
const idOf = (i: number): string => `doc-${String(i).padStart(5, '0')}`;
/** Ids whose every leaf and path are compared (allDocs compares every document's winner). */
const SAMPLE = Array.from({ length: 25 }, (_, i) => idOf(i * 79));

/** Writes `n` documents and edits each `edits − 1` more times, in bulks: each ends at rev `edits`. */
async function writeEdited(db: Pouch, n: number, edits: number): Promise<void> {
  const revs = new Map<string, string>();
  for (let e = 1; e <= edits; e++) {
    for (let from = 0; from < n; from += 500) {
      const docs = Array.from({ length: Math.min(500, n - from) }, (_, k) => {
        const id = idOf(from + k);
        return { _id: id, ...(revs.has(id) ? { _rev: revs.get(id) } : {}), n: from + k, edit: e, text: `edit ${e} of document ${from + k}` };
      });
      for (const r of await db.bulkDocs(docs)) {
        expect(r.error).toBeUndefined();
        revs.set(r.id, r.rev!);
      }
    }
  }
}

describe('kvt couch with a real PouchDB', () => {
  let cluster: TestCluster;
  let couch: KvtProcess;
  const pouches = new PouchDatabases();

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    couch = await startCouch(cluster.controllerAddress, ['--scope', SCOPE]);
  }, 120_000);
  afterAll(async () => {
    await pouches.dispose();
    await couch?.stop();
    await cluster?.[Symbol.asyncDispose]();
  });

  it('replicates 2,000 documents of 3 edits each into kvt, and out of kvt into an empty database, identically', async () => {
    const source = pouches.local('source');
    await writeEdited(source, DOCUMENTS, EDITS);
    const remote = pouches.remote(couch.port, 'edited');
    const into = await source.replicate.to(remote);
    expect([into.ok, into.docs_written, into.doc_write_failures]).toEqual([true, DOCUMENTS, 0]);
    await expectSameDatabases(source, remote, SAMPLE);
    const sample = await remote.get(idOf(7), { revs: true });
    expect([sample._rev.startsWith(`${EDITS}-`), (sample._revisions as { ids: string[] }).ids.length]).toEqual([true, EDITS]);

    const empty = pouches.local('empty');
    const out = await empty.replicate.from(remote);
    expect([out.ok, out.docs_written, out.doc_write_failures]).toEqual([true, DOCUMENTS, 0]);
    await expectSameDatabases(remote, empty, SAMPLE);
    await expectSameDatabases(source, empty, SAMPLE);
    // Nothing more to do either way.
    expect((await source.replicate.to(remote)).docs_written).toBe(0);
    expect((await empty.replicate.from(remote)).docs_written).toBe(0);
  }, 300_000);

  it('replicates deletions both ways', async () => {
    const local = pouches.local('deletions');
    const remote = pouches.remote(couch.port, 'deletions');
    await writeEdited(local, 200, 1);
    await local.replicate.to(remote);
    // Deleted in PouchDB, replicated into kvt.
    for (let i = 0; i < 20; i++) {
      const doc = await local.get(idOf(i));
      await local.remove(idOf(i), doc._rev);
    }
    expect((await local.replicate.to(remote)).docs_written).toBe(20);
    expect(await statusOf(remote.get(idOf(3)))).toBe(404);
    // Deleted through kvt, replicated into PouchDB.
    for (let i = 100; i < 130; i++) {
      const doc = await remote.get(idOf(i));
      await remote.remove(idOf(i), doc._rev);
    }
    expect((await local.replicate.from(remote)).docs_written).toBe(30);
    expect(await statusOf(local.get(idOf(110)))).toBe(404);
    const live = await snapshot(local);
    expect(live).toHaveLength(150);
    await expectSameDatabases(local, remote, [idOf(3), idOf(110), idOf(150)]);
    const deleted = (await remote.allDocs({ keys: [idOf(3), idOf(110)] })).rows.map((r) => r.value?.deleted);
    expect(deleted).toEqual([true, true]);
  }, 120_000);

  it('settles conflicts made on both sides the same way on both, and clears them on both once resolved', async () => {
    const local = pouches.local('conflicts');
    const remote = pouches.remote(couch.port, 'conflicts');
    const ids = ['apple', 'pear', 'plum'];
    for (const id of ids) await local.put({ _id: id, v: 'first' });
    await local.sync(remote);
    // The same documents edited differently on each side (twice on kvt's for plum: a longer branch).
    for (const id of ids) {
      await local.put({ ...(await local.get(id)), v: `pouch ${id}` });
      await remote.put({ ...(await remote.get(id)), v: `kvt ${id}` });
    }
    await remote.put({ ...(await remote.get('plum')), v: 'kvt plum again' });
    const synced = await local.sync(remote);
    expect(synced).toBeDefined();
    const [mine, theirs] = await Promise.all([snapshot(local), snapshot(remote)]);
    expect(theirs).toEqual(mine);
    for (const row of mine as { id: string; doc: { _conflicts?: string[]; v: string } }[]) {
      expect(row.doc._conflicts).toHaveLength(1);
      if (row.id === 'plum') expect(row.doc.v).toBe('kvt plum again');
    }
    // Resolved on PouchDB's side: the losing leaf deleted; after a sync, no conflict on either side.
    for (const id of ids) {
      const doc = await local.get(id, { conflicts: true });
      for (const loser of doc._conflicts as string[]) await local.remove(id, loser);
    }
    await local.sync(remote);
    const [after, afterRemote] = await Promise.all([snapshot(local), snapshot(remote)]);
    expect(afterRemote).toEqual(after);
    for (const row of after as { doc: { _conflicts?: string[] } }[]) expect(row.doc._conflicts).toBeUndefined();
    await expectSameDatabases(local, remote, ids);
  }, 120_000);

  it('picks up writes made through the TypeScript API in a live replication, within a bounded time', async () => {
    const local = pouches.local('live');
    const remote = pouches.remote(couch.port, 'live');
    await remote.info();
    const factory = KeyValueTableFactory.withScope(SCOPE, { controller: cluster.controllerAddress });
    const table = factory.forKeyValueTable('live', { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes });
    const store = new DocumentStore(table, { partitionCount: 4 });
    const live = local.replicate.from(remote, { live: true, retry: true });
    try {
      const first = await store.put('from-typescript', { n: 1 });
      await eventually('the first write reaching PouchDB', async () => (await statusOf(local.get('from-typescript'))) === undefined);
      expect((await local.get('from-typescript'))._rev).toBe(first.rev);
      const second = await store.put('from-typescript', { n: 2 }, { rev: first.rev });
      await store.bulkDocs([{ _id: 'replicated', _rev: '1-abc', n: 3 }], { newEdits: false });
      await eventually('the later writes reaching PouchDB', async () => (await local.get('from-typescript'))._rev === second.rev && (await statusOf(local.get('replicated'))) === undefined);
      expect(await local.get('replicated')).toEqual({ _id: 'replicated', _rev: '1-abc', n: 3 });
    } finally {
      live.cancel();
      await store.close();
      await table.close();
      await factory.close();
    }
  }, 120_000);

  it("lists only the scope's tables that are database names, and serves a database deleted behind its back as missing, then made again", async () => {
    const call = async (method: string, url: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
      const r = await fetch(`http://127.0.0.1:${couch.port}${url}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
      return { status: r.status, body: await r.json() };
    };
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    try {
      expect(await manager.createKeyValueTable(SCOPE, 'Not.A.Database', { partitionCount: 1 })).toBe(true);
      expect(await call('PUT', '/recreated')).toEqual({ status: 201, body: { ok: true } });
      expect((await call('PUT', '/recreated/first', { v: 1 })).status).toBe(201);
      const listed = (await call('GET', '/_all_dbs')).body as string[];
      expect(listed).toContain('recreated');
      expect(listed).not.toContain('Not.A.Database');

      expect(await manager.deleteKeyValueTable(SCOPE, 'recreated')).toBe(true);
      expect(await call('GET', '/recreated/first')).toEqual({ status: 404, body: { error: 'not_found', reason: 'Database does not exist: recreated' } });
      // Made again with another partition count: what the endpoint serves is the new table.
      expect(await call('PUT', '/recreated?q=2')).toEqual({ status: 201, body: { ok: true } });
      expect(await call('PUT', '/recreated/first', { v: 2 })).toEqual({ status: 201, body: { ok: true, id: 'first', rev: expect.stringMatching(/^1-/) } });
      expect(await call('GET', '/recreated')).toEqual({ status: 200, body: expect.objectContaining({ doc_count: 1, doc_del_count: 0, cluster: { q: 2, n: 1, w: 1, r: 1 } }) });
      expect((await call('GET', '/recreated/first')).body).toEqual({ _id: 'first', _rev: expect.stringMatching(/^1-/), v: 2 });
    } finally {
      await manager.close();
    }
  }, 60_000);
});
