/**
 * Conditional updates of family-less keys read LevelDB before they are checked. Each reads as its
 * update arrives (synchronously, or on LevelDB's thread pool: whichever, no read waits for an earlier
 * update's), while the updates still stage in arrival order.
 */
import { describe, expect, it } from 'vitest';
import { scratchEngines } from '../../harness/scratch-engines';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';

const b = (s: string): Buffer => Buffer.from(s);

describe('SegmentEngine conditional updates', () => {
  const scratch = scratchEngines();

  /** An engine whose LevelDB point reads (either kind) are logged as `read <key>`; the test logs what it sees beside them. */
  async function openWithReadLog(): Promise<{ engine: SegmentEngine; log: string[] }> {
    const engine = await scratch.open();
    await engine.createSegment('1');
    // The real database underneath, its reads only logged; nothing is faked.
    const db = (engine as unknown as { db: { getMany: (keys: Buffer[]) => Promise<unknown>; getSync: (key: Buffer) => unknown } }).db;
    const log: string[] = [];
    const name = (key: Buffer): string => `read ${key.toString('latin1').replace(/[^ -~]/g, '')}`;
    const [getMany, getSync] = [db.getMany.bind(db), db.getSync.bind(db)];
    db.getMany = (keys: Buffer[]) => {
      for (const key of keys) log.push(name(key));
      return getMany(keys);
    };
    db.getSync = (key: Buffer) => {
      log.push(name(key));
      return getSync(key);
    };
    return { engine, log };
  }

  it('reads for the conditional updates that arrive together at once, not one after another', async () => {
    const { engine, log } = await openWithReadLog();
    const versions = await Promise.all(Array.from({ length: 8 }, (_, i) => engine.update({ segmentId: '1', modifications: [{ key: b(`k${i}`), value: b('v0') }] })));
    log.length = 0;
    const replaces = versions.map((v, i) =>
      engine
        .update({
          segmentId: '1',
          modifications: [{ key: b(`k${i}`), value: b('v1'), condition: { kind: 'VERSION', segmentId: '1', sequence: v.sequences[0] } }],
        })
        .then((r) => (log.push(`done k${i}`), r)),
    );
    const results = await Promise.all(replaces);
    expect(results.map((r) => r.sequences.length)).toEqual(Array(8).fill(1));
    // Every key was read once, all eight before the first update answered.
    const reads = log.filter((l) => l.startsWith('read '));
    for (let i = 0; i < 8; i++) expect(reads.filter((l) => l.endsWith(`k${i}`))).toHaveLength(1);
    const lastRead = log.map((l) => l.startsWith('read ')).lastIndexOf(true);
    expect(log.findIndex((l) => l.startsWith('done '))).toBeGreaterThan(lastRead);
    const got = await engine.get({ segmentId: '1', keys: Array.from({ length: 8 }, (_, i) => ({ key: b(`k${i}`) })) });
    expect(got.entries.map((e) => e.value.toString())).toEqual(Array(8).fill('v1'));
  });

  it('stages them in arrival order: a put sent after a replace lands after it, a second replace of the same version fails', async () => {
    const { engine, log } = await openWithReadLog();
    const first = await engine.update({ segmentId: '1', modifications: [{ key: b('k'), value: b('v0') }] });
    const version = { kind: 'VERSION' as const, segmentId: '1', sequence: first.sequences[0] };
    for (let round = 0; round < 10; round++) {
      // Sent in one turn: replace (reads first), put (no read), replace of the same version, insert of
      // an existing key, replace of another key; then a get.
      const settled = await Promise.allSettled([
        engine.update({ segmentId: '1', modifications: [{ key: b('k'), value: b(`r${round}`), condition: version }] }),
        engine.update({ segmentId: '1', modifications: [{ key: b('k'), value: b(`p${round}`) }] }),
        engine.update({ segmentId: '1', modifications: [{ key: b('k'), value: b('late'), condition: version }] }),
        engine.update({ segmentId: '1', modifications: [{ type: 'INSERT', key: b('k'), value: b('insert') }] }),
        engine.get({ segmentId: '1', keys: [{ key: b('k') }] }),
      ]);
      const [replace, put, late, insert, get] = settled;
      if (round === 0) expect(replace.status).toBe('fulfilled');
      else expect(replace).toMatchObject({ status: 'rejected', reason: { code: 'BAD_KEY_VERSION' } });
      expect(put.status).toBe('fulfilled');
      expect(late).toMatchObject({ status: 'rejected', reason: { code: 'BAD_KEY_VERSION' } });
      expect(insert).toMatchObject({ status: 'rejected', reason: { code: 'BAD_KEY_VERSION' } });
      // The get came after the put: it answers with the put, whatever the reads' timing.
      expect(get.status === 'fulfilled' && get.value.entries[0].value.toString()).toBe(`p${round}`);
      if (put.status === 'fulfilled' && get.status === 'fulfilled') expect(get.value.entries[0].sequence).toBe(put.value.sequences[0]);
    }
    // The conditional ones read LevelDB: two replaces and an insert a round.
    expect(log.filter((l) => l.endsWith('k')).length).toBeGreaterThanOrEqual(30);
  });
});
