import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { describe, expect, it } from 'vitest';
import { GroupCommitter } from '../../../segmentstore/storage/log/group-commit';
import { LogApplier } from '../../../segmentstore/storage/log/log-applier';
import { Overlay } from '../../../segmentstore/storage/overlay';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import { tempDir } from '../../harness/process';

/** A committer writing each flush to `db` directly with `sync` (no durable log), as the engine does with `logBytes: 0`. */
function directCommitter(db: ClassicLevel<Buffer, Buffer>, overlay: Overlay, maxFlushOps?: number): GroupCommitter {
  // eslint-disable-next-line prefer-const -- the applier's callbacks reach the committer built after it
  let committer: GroupCommitter;
  const applier = new LogApplier(
    db,
    undefined,
    { logBytes: 0 },
    (batches) => committer.applied(batches),
    (err) => committer.fail(err),
  );
  committer = new GroupCommitter(applier, overlay, maxFlushOps);
  return committer;
}

describe('GroupCommitter', () => {
  it('writes everything staged during a flush in the next single batch, acknowledging after it', async () => {
    using dir = tempDir();
    const db = new ClassicLevel<Buffer, Buffer>(path.join(dir.path, 'db'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    try {
      const committer = directCommitter(db, new Overlay(), 10_000);
      const first = committer.batch();
      first.put(Buffer.from('a'), Buffer.from('1'));
      committer.staged();
      await new Promise((r) => setImmediate(r)); // the first flush is now running
      const second = committer.batch();
      expect(second).not.toBe(first);
      for (let i = 0; i < 50; i++) {
        expect(committer.batch()).toBe(second);
        second.put(Buffer.from(`b${i}`), Buffer.from('2'));
        committer.staged();
      }
      await second.done;
      expect(await db.get(Buffer.from('b49'))).toEqual(Buffer.from('2'));
      expect(committer.stats).toEqual({ flushes: 2, ops: 51 });
    } finally {
      await db.close();
    }
  });

  it('fails everything queued behind a failed write, rolls it out of the overlay and refuses every later write (fail-stop)', async () => {
    using dir = tempDir();
    const db = new ClassicLevel<Buffer, Buffer>(path.join(dir.path, 'db'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    try {
      // LevelDB cannot be made to fail on demand: the first chained write fails once it is let go.
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let failNext = true;
      const failingDb = Object.create(db) as ClassicLevel<Buffer, Buffer>;
      failingDb.batch = ((...args: []) => {
        const chain = db.batch(...args);
        if (!failNext) return chain;
        failNext = false;
        chain.write = (async () => {
          await gate;
          throw new Error('injected write failure');
        }) as typeof chain.write;
        return chain;
      }) as typeof db.batch;
      const overlay = new Overlay();
      const committer = directCommitter(failingDb, overlay, 1);
      let failures = 0;
      committer.onFailure = (err) => {
        expect((err as Error).message).toBe('injected write failure');
        failures++;
      };
      const entry = (k: string) => ({ id: k, storageKey: Buffer.from(k), sequence: 1, expiresAt: 0, value: Buffer.from('v') });
      const first = committer.batch();
      first.put(Buffer.from('a'), Buffer.from('1'));
      first.entries.push(entry('a'));
      overlay.set(first.entries[0]);
      committer.staged();
      await new Promise((r) => setImmediate(r)); // the failing write is running
      const queued = committer.batch();
      expect(queued).not.toBe(first);
      queued.put(Buffer.from('b'), Buffer.from('2'));
      queued.entries.push(entry('b'));
      overlay.set(queued.entries[0]);
      committer.staged();
      release();
      await expect(first.done).rejects.toThrow('injected write failure');
      await expect(queued.done).rejects.toThrow('injected write failure');
      expect(failures).toBe(1);
      expect(overlay.get('a')).toBeUndefined();
      expect(overlay.get('b')).toBeUndefined();
      // LevelDB's log may end in a torn record after a failed write, and a later record could be lost
      // behind it at recovery: nothing more is written until the process restarts and recovers.
      expect(committer.failure).toBeInstanceOf(Error);
      const after = committer.batch();
      after.put(Buffer.from('c'), Buffer.from('3'));
      committer.staged();
      await expect(after.done).rejects.toThrow('injected write failure');
      await committer.drain();
      expect(failures).toBe(1);
      expect(await db.get(Buffer.from('c'))).toBeUndefined();
      expect(await db.get(Buffer.from('b'))).toBeUndefined();
      expect(await db.get(Buffer.from('a'))).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it('refuses at once what is queued when it is failed from outside a flush (LevelDB could not take what the log holds)', async () => {
    using dir = tempDir();
    const db = new ClassicLevel<Buffer, Buffer>(path.join(dir.path, 'db'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    try {
      const committer = directCommitter(db, new Overlay());
      const failures: unknown[] = [];
      committer.onFailure = (err) => failures.push(err);
      // Staged, but its flush not yet started (the update calls staged() once it is all in).
      const queued = committer.batch();
      queued.put(Buffer.from('a'), Buffer.from('1'));
      const err = new Error('apply failed');
      committer.fail(err);
      // Answered without waiting for anything else to be staged: refused within this turn.
      const outcome = await Promise.race([
        queued.done.then(
          () => 'durable',
          (e: Error) => `refused: ${e.message}`,
        ),
        new Promise((r) => setImmediate(() => r('still waiting'))),
      ]);
      expect(outcome).toBe('refused: apply failed');
      await expect(queued.applied).rejects.toBe(err);
      expect(failures).toEqual([err]);
      expect(committer.failure).toBe(err);
      expect(await db.get(Buffer.from('a'))).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it('does not let a hold that is never released starve the flush', async () => {
    using dir = tempDir();
    const db = new ClassicLevel<Buffer, Buffer>(path.join(dir.path, 'db'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    try {
      const committer = directCommitter(db, new Overlay());
      committer.hold();
      const batch = committer.batch();
      batch.put(Buffer.from('k'), Buffer.from('v'));
      committer.staged();
      await batch.done;
      expect(await db.get(Buffer.from('k'))).toEqual(Buffer.from('v'));
    } finally {
      await db.close();
    }
  });

  it('puts all updates of one Execute, conditional ones included, into one flush', async () => {
    using dir = tempDir();
    // A generous hold limit, so a slow machine cannot split the Execute.
    const engine = await SegmentEngine.open(path.join(dir.path, 'db'), { expirySweepIntervalMs: 0, maxHoldMs: 60_000 });
    try {
      await engine.createSegment('1');
      const before = engine.commitStats.flushes;
      const results = await Promise.all(
        engine.withHeldCommits((update) =>
          Array.from({ length: 20 }, (_, i) => update({ segmentId: '1', modifications: [{ type: i % 2 ? 'INSERT' : 'PUT', key: Buffer.from(`k${i}`), value: Buffer.from('v') }] })),
        ),
      );
      expect(results).toHaveLength(20);
      expect(engine.commitStats.flushes - before).toBe(1);
    } finally {
      await engine.close();
    }
  });
});
