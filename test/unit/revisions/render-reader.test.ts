/**
 * Reading a render split across chunks: a record whose chunks changed under the read is read again,
 * and a damaged chunk is reported, never returned in part. The in-memory table lets a write of the
 * same render land exactly between the record's read and its chunks' read.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryKeyValueTable, PageRevisionStore, Serializers, ServiceError } from '../../../client';
import { KIND } from '../../../client/revisions/key-layout';
import { beforeChunkReads, BytesTable, keysOfKind, rejection, T0, tidAt } from '../../suites/revisions-context';

/** An in-memory table, and `beforeChunkRead`: run once, just before the next read of a render's chunks. */
function interleaving(): { table: BytesTable; next: { beforeChunkRead?: () => Promise<unknown> } } {
  const next: { beforeChunkRead?: () => Promise<unknown> } = {};
  const memory = new InMemoryKeyValueTable<Uint8Array, Uint8Array>({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 2, name: 'memory/reader' });
  const table = beforeChunkReads(memory, async () => {
    const hook = next.beforeChunkRead;
    next.beforeChunkRead = undefined;
    await hook?.();
  });
  return { table, next };
}

const version = (n: number) => ({ value: Buffer.alloc(1_500_000, n), parts: { n: String(n) } });

describe('PageRevisionStore reads of chunked renders', () => {
  it('reads again when the render is written anew twice between its record and its chunks, returning the newest whole', async () => {
    const { table, next } = interleaving();
    const store = new PageRevisionStore(table);
    const tid = tidAt(T0);
    await store.putRender({ title: 'P', rev: 1, tid, ...version(1) });
    // One rewrite keeps the upload it replaces (the suite's lockstep case); a second removes it.
    next.beforeChunkRead = async () => {
      await store.putRender({ title: 'P', rev: 1, tid, ...version(2) });
      await store.putRender({ title: 'P', rev: 1, tid, ...version(3) });
    };
    const read = await store.getRender('P', 1, tid);
    expect(next.beforeChunkRead).toBeUndefined();
    expect(read?.parts.n).toBe('3');
    expect((read?.value as Buffer).equals(version(3).value)).toBe(true);
  });

  it('reports a chunk of the wrong length with ServiceError instead of returning a render padded or cut', async () => {
    const { table } = interleaving();
    const store = new PageRevisionStore(table);
    const tid = tidAt(T0);
    await store.putRender({ title: 'P', rev: 1, tid, ...version(1) });
    const [, last] = await keysOfKind(table, 'P', KIND.CHUNK);
    const chunk = await table.get('P', last);
    await table.put('P', last, Buffer.from(chunk!.value).subarray(1));
    const err = await rejection(store.getRender('P', 1, tid));
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.message).toMatch(/^a render of page "P" changed under 4 reads in a row: chunk 1 of render [0-9a-f-]+ of revision 1 is \d+ bytes$/);
  });
});
