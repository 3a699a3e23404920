import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { describe, expect, it } from 'vitest';
import { LOG_FILE } from '../../../segmentstore/storage/log/durable-log';
import { CHECKPOINT_KEY, decodeCheckpoint } from '../../../segmentstore/storage/log/log-applier';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../../segmentstore/storage/segments/segment-state';
import { scratchEngines } from '../../harness/scratch-engines';

const SEG = '1';
/** Applied only when a reader needs it (or at close): what the log holds stays there. */
const HELD: SegmentEngineOptions = { expirySweepIntervalMs: 0, logApplyMs: 60_000 };

function put(engine: SegmentEngine, family: string, key: string, value: string | Buffer) {
  return engine.update({ segmentId: SEG, modifications: [{ family, key: Buffer.from(key), value: Buffer.isBuffer(value) ? value : Buffer.from(value) }] });
}

async function read(engine: SegmentEngine, family: string, key: string): Promise<string | null> {
  const [e] = (await engine.get({ segmentId: SEG, keys: [{ family, key: Buffer.from(key) }] })).entries;
  return e.found ? Buffer.from(e.value).toString() : null;
}

/** What LevelDB alone holds at `location` (no engine open on it): how many keys, and the log's checkpoint. */
async function rawLevelDb(location: string): Promise<{ keys: number; checkpoint: ReturnType<typeof decodeCheckpoint> }> {
  const db = new ClassicLevel<Buffer, Buffer>(location, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  try {
    const keys = (await db.keys({ keyEncoding: 'buffer' }).all()).length;
    return { keys, checkpoint: decodeCheckpoint(await db.get(CHECKPOINT_KEY)) };
  } finally {
    await db.close();
  }
}

describe('SegmentEngine with its durable log', () => {
  const { location, open, defer } = scratchEngines('kvt-engine-log-', HELD);

  it('acknowledges once the log holds a write, serves it from memory, and applies it to LevelDB when a reader needs it', async () => {
    const engine = await open(location());
    await engine.createSegment(SEG);
    await put(engine, 'f', 'k', 'v1');
    await put(engine, '', 'plain', 'p1');
    expect(engine.commitStats.applies).toBe(0);
    expect(await read(engine, 'f', 'k')).toBe('v1');
    expect(await read(engine, '', 'plain')).toBe('p1');
    expect(engine.commitStats.applies).toBe(0);
    // A family's iterator page is located like a point read: from memory, nothing applied.
    const page = await engine.iterate({ segmentId: SEG, family: 'f', maxItems: 10, includeValues: true });
    expect(page.items.map((e) => Buffer.from(e.value).toString())).toEqual(['v1']);
    expect(engine.commitStats.applies).toBe(0);
    // A family-less iterator reads a LevelDB snapshot: what it needs is applied first.
    const plain = await engine.iterate({ segmentId: SEG, family: '', maxItems: 10, includeValues: true });
    expect(plain.items.map((e) => Buffer.from(e.value).toString())).toEqual(['p1']);
    expect(engine.commitStats.applies).toBe(1);
    expect((await engine.segmentInfo(SEG)).entryCount).toBe('2');
    expect(engine.commitStats.applies).toBe(1); // nothing new to apply
  });

  it('gives LevelDB only the newest write of a key rewritten between applies', async () => {
    const engine = await open(location());
    await engine.createSegment(SEG);
    const before = engine.commitStats;
    for (let i = 0; i < 50; i++) await put(engine, 'f', 'k', `v${i}`);
    const flushed = engine.commitStats;
    expect(flushed.flushes - before.flushes).toBe(50);
    // Each flush wrote the family's chunk and the segment's sequence record.
    expect(flushed.ops - before.ops).toBe(100);
    await engine.segmentInfo(SEG);
    // One apply, of one chunk and one sequence record.
    expect(engine.commitStats.applies).toBe(1);
    expect(engine.commitStats.appliedOps).toBe(2);
    expect(await read(engine, 'f', 'k')).toBe('v49');
  });

  it('replays the writes LevelDB never got when the store stopped without applying them (a crash)', async () => {
    const live = location();
    const engine = await open(live);
    await engine.createSegment(SEG);
    const acked = await Promise.all(Array.from({ length: 20 }, (_, i) => put(engine, `f${i % 3}`, `k${i}`, `v${i}`)));
    await put(engine, '', 'plain', 'p');
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE', family: 'f0', key: Buffer.from('k0') }] });
    // The directory as a crash would leave it: LevelDB without the writes, the log with them.
    const crashed = `${live}-crashed`;
    fs.cpSync(live, crashed, { recursive: true });
    defer(() => fs.rmSync(crashed, { recursive: true, force: true }));
    expect((await rawLevelDb(crashed)).keys).toBeLessThan(10); // format, clock, segment record, checkpoint…

    const recovered = await open(crashed);
    expect(await read(recovered, 'f0', 'k0')).toBeNull();
    for (let i = 1; i < 20; i++) expect(await read(recovered, `f${i % 3}`, `k${i}`)).toBe(`v${i}`);
    expect(await read(recovered, '', 'plain')).toBe('p');
    const [e] = (await recovered.get({ segmentId: SEG, keys: [{ family: 'f1', key: Buffer.from('k1') }] })).entries;
    expect(e.sequence).toBe(acked[1].sequences[0]);
    // Versions go on increasing after the replayed ones.
    const next = await put(recovered, 'f1', 'k1', 'later');
    expect(BigInt(next.sequences[0])).toBeGreaterThan(BigInt(acked[19].sequences[0]) + 1n);
  });

  it('keeps, after an apply that starts as a record is written, that record for replay (a crash right after)', async () => {
    const live = location();
    const engine = await open(live);
    await engine.createSegment(SEG);
    await put(engine, 'f', 'first', 'a'); // pending in the log, not applied
    // The next record's write completes and, before its group reaches the applier, an apply of what
    // is pending starts (as one a reader asks for may, in the turns between): it must set the
    // checkpoint before that record, whose writes it does not hold.
    type Internals = { applier: { log: { append: (...a: unknown[]) => Promise<unknown> }; writePending: (direct: undefined) => Promise<void> } };
    const { applier } = engine as unknown as Internals;
    const append = applier.log.append.bind(applier.log);
    let apply: Promise<void> | undefined;
    applier.log.append = async (...a: unknown[]) => {
      const position = await append(...a);
      apply ??= applier.writePending(undefined);
      return position;
    };
    await put(engine, 'f', 'second', 'b');
    await apply;
    // The directory as a crash then would leave it: LevelDB with the first write and the checkpoint, the log with the second.
    const crashed = `${live}-crashed`;
    fs.cpSync(live, crashed, { recursive: true });
    defer(() => fs.rmSync(crashed, { recursive: true, force: true }));
    const recovered = await open(crashed);
    expect([await read(recovered, 'f', 'first'), await read(recovered, 'f', 'second')]).toEqual(['a', 'b']);
  });

  it('applies everything at close: LevelDB alone then holds it, with the checkpoint at the end of the log', async () => {
    const at = location();
    const engine = await SegmentEngine.open(at, HELD);
    await engine.createSegment(SEG);
    for (let i = 0; i < 10; i++) await put(engine, 'f', `k${i}`, `v${i}`);
    await engine.close();
    const { keys, checkpoint } = await rawLevelDb(at);
    expect(keys).toBeGreaterThan(3);
    expect(checkpoint?.lsn).toBe(11); // ten records written, the next is the eleventh
    const again = await open(at);
    expect(await read(again, 'f', 'k9')).toBe('v9');
    expect(again.commitStats.applies).toBe(0);
  });

  it('writes a flush too large for the log straight to LevelDB, together with what waited, in order', async () => {
    const at = location();
    const options: SegmentEngineOptions = { ...HELD, logBytes: 64 * 1024 };
    const engine = await open(at, options);
    await engine.createSegment(SEG);
    await put(engine, 'f', 'a', 'logged');
    await put(engine, 'f', 'b', 'logged');
    const big = Buffer.alloc(40 * 1024, 'x'); // over half the log: never fits
    await engine.update({
      segmentId: SEG,
      modifications: [
        { family: 'f', key: Buffer.from('b'), value: big },
        { family: 'f', key: Buffer.from('c'), value: Buffer.from('direct') },
      ],
    });
    expect(engine.commitStats.applies).toBe(0);
    await put(engine, 'f', 'c', 'logged after');
    await engine.close();
    const reopened = await open(at, options);
    expect(await read(reopened, 'f', 'a')).toBe('logged');
    expect(await read(reopened, 'f', 'b')).toBe(big.toString());
    expect(await read(reopened, 'f', 'c')).toBe('logged after');
  });

  it('replays and removes a log left by an earlier run when opened without one', async () => {
    const live = location();
    const engine = await open(live);
    await engine.createSegment(SEG);
    await put(engine, 'f', 'k', 'only in the log');
    const crashed = `${live}-crashed`;
    fs.cpSync(live, crashed, { recursive: true });
    defer(() => fs.rmSync(crashed, { recursive: true, force: true }));

    const withoutLog = await open(crashed, { expirySweepIntervalMs: 0, logBytes: 0 });
    expect(await read(withoutLog, 'f', 'k')).toBe('only in the log');
    expect(fs.existsSync(path.join(crashed, LOG_FILE))).toBe(false);
    await put(withoutLog, 'f', 'k', 'in LevelDB');
    await withoutLog.close();
    expect((await rawLevelDb(crashed)).checkpoint).toBeUndefined();
  });
});
