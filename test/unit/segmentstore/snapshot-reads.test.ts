/**
 * The records a Get or a family page reads from LevelDB (read/snapshot-view.ts readRecords) are those
 * of the snapshot taken when the keys were located, even when LevelDB applies a batch after it and
 * before the reads: a multi-key answer never mixes two states. The reads are synchronous, so a batch
 * applied by LevelDB's thread pool between two keys of one Get is the case this guards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { readRecords } from '../../../segmentstore/storage/read/snapshot-view';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openDb(): Promise<ClassicLevel<Buffer, Buffer>> {
  const dir = mkdtempSync(join(tmpdir(), 'kvt-snapshot-reads-'));
  dirs.push(dir);
  const db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  return db;
}

const b = (s: string): Buffer => Buffer.from(s);

describe('readRecords', () => {
  it('reads every key at the snapshot, not the batch LevelDB applied after it', async () => {
    const db = await openDb();
    try {
      await db.batch([
        { type: 'put', key: b('a'), value: b('a1') },
        { type: 'put', key: b('b'), value: b('b1') },
      ]);
      const snapshot = db.snapshot();
      await db.batch([
        { type: 'put', key: b('a'), value: b('a2') },
        { type: 'put', key: b('b'), value: b('b2') },
        { type: 'put', key: b('c'), value: b('c2') },
        { type: 'del', key: b('d') },
      ]);
      const atSnapshot = readRecords(db, [b('a'), b('b'), b('c')], snapshot);
      expect(atSnapshot.map((v) => v?.toString())).toEqual(['a1', 'b1', undefined]);
      const now = readRecords(db, [b('a'), b('c'), b('missing')], undefined);
      expect(now.map((v) => v?.toString())).toEqual(['a2', 'c2', undefined]);
      await snapshot.close();
    } finally {
      await db.close();
    }
  });

  it("passes LevelDB's get options it need not copy: none without a snapshot, the encodings named with one", async () => {
    // abstract-level's getSync copies an options object that does not name the database's own
    // encodings, on every call: ~4.5 µs of CPU a read, twice LevelDB's own read of a cached record.
    const db = await openDb();
    try {
      await db.put(b('a'), b('a1'));
      const seen: unknown[] = [];
      const getSync = db.getSync.bind(db);
      db.getSync = ((key: Buffer, options?: unknown) => {
        seen.push(options);
        return getSync(key, options as never);
      }) as typeof db.getSync;
      const snapshot = db.snapshot();
      expect(readRecords(db, [b('a')], undefined).map(String)).toEqual(['a1']);
      expect(readRecords(db, [b('a')], snapshot).map(String)).toEqual(['a1']);
      expect(seen).toEqual([undefined, { keyEncoding: 'buffer', valueEncoding: 'buffer', snapshot }]);
      await snapshot.close();
    } finally {
      await db.close();
    }
  });
});
