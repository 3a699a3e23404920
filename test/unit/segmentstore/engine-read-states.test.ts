/**
 * Reads see every acknowledged write and nothing else, also while the durable log holds writes that
 * LevelDB does not have yet (issue 38): point reads of keyed families never take LevelDB's floor
 * chunk for a chunk the overlay changed; iterators, scans and counts never read LevelDB between the
 * slices of one apply; a deleted segment's logged writes never come back.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClassicLevel } from 'classic-level';
import { MAX_CHUNK_ENTRIES } from '../../../segmentstore/storage/chunks/chunk-codec';
import { encodeSegmentId, prefixSuccessor, segmentDataPrefix } from '../../../segmentstore/storage/key-codec';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../../segmentstore/storage/segments/segment-state';
import type { ModificationInput } from '../../../segmentstore/storage/validation';
import { failNextLogWrite } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';
import { scratchEngines } from '../../harness/scratch-engines';

const SEG = '1';
const OTHER = '2';
/** Applied only when a reader needs it (or at close): what the log holds stays there meanwhile. */
const HELD: SegmentEngineOptions = { expirySweepIntervalMs: 0, logApplyMs: 60_000 };

const key = (i: number): Buffer => Buffer.from(`k${String(i).padStart(4, '0')}`);

function putAll(engine: SegmentEngine, segmentId: string, family: string, from: number, to: number, value = (i: number) => Buffer.from(`v${i}`)) {
  const modifications: ModificationInput[] = [];
  for (let i = from; i < to; i++) modifications.push({ family, key: key(i), value: value(i) });
  return engine.update({ segmentId, modifications });
}

async function found(engine: SegmentEngine, family: string, keys: number[]): Promise<number[]> {
  const { entries } = await engine.get({ segmentId: SEG, keys: keys.map((i) => ({ family, key: key(i) })) });
  return keys.filter((_, n) => entries[n].found);
}

type Fn = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Holds back the LevelDB reads (iterators, key and value lists) made from now on: each is made, with
 * the implicit snapshot an iterator takes when it is made, only once `release` is called. Explicit
 * snapshots taken earlier keep their state. `reached(n)` resolves once n reads wait.
 */
function holdLevelDbReads() {
  const proto = ClassicLevel.prototype as unknown as Record<'iterator' | 'keys', Fn>;
  const originals = { iterator: proto.iterator, keys: proto.keys };
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let waiting = 0;
  const counted: Array<() => void> = [];
  for (const name of ['iterator', 'keys'] as const) {
    proto[name] = function (this: unknown, ...args: unknown[]) {
      const apply = (): Record<string, Fn> => originals[name].apply(this, args) as Record<string, Fn>;
      let real: Record<string, Fn> | undefined;
      waiting++;
      counted.splice(0).forEach((f) => f());
      const made = gate.then(() => (real = apply()));
      const later =
        (method: string) =>
        async (...a: unknown[]) => {
          await made;
          return real![method](...a);
        };
      return { all: later('all'), nextv: later('nextv'), next: later('next'), close: later('close') };
    };
  }
  const restore = () => Object.assign(proto, originals);
  return {
    reached: async (n: number) => {
      while (waiting < n) await new Promise<void>((resolve) => counted.push(resolve));
    },
    release: () => {
      restore();
      open();
    },
  };
}

/** Runs `between` once the next chained batch write has been written, before that write resolves. */
function afterNextChainedWrite(between: () => Promise<void>) {
  const proto = ClassicLevel.prototype as unknown as { batch: Fn };
  const original = proto.batch;
  const restore = () => {
    proto.batch = original;
  };
  proto.batch = function (this: unknown, ...args: unknown[]) {
    const chain = original.apply(this, args) as { write: Fn };
    if (args.length > 0) return chain;
    restore();
    const write = chain.write.bind(chain);
    chain.write = async (...a: unknown[]) => {
      await write(...a);
      await between();
    };
    return chain;
  };
  return { restore };
}

describe('SegmentEngine reads while the log holds writes LevelDB does not have', () => {
  const { location, open, defer } = scratchEngines('kvt-read-states-', HELD);
  /** 200 keys of family `f` in two chunks (k0000-k0127, k0128-k0199), applied to LevelDB. */
  async function twoChunks(engine: SegmentEngine): Promise<void> {
    await engine.createSegment(SEG);
    await putAll(engine, SEG, 'f', 0, 200);
    await engine.segmentInfo(SEG); // applies
    expect(MAX_CHUNK_ENTRIES).toBe(128);
  }

  it('does not find the keys of a chunk a range removal emptied, before the removal is applied', async () => {
    const engine = await open();
    await twoChunks(engine);
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE_RANGE', family: 'f', rangeFrom: key(128), rangeTo: key(999) }] });
    expect(await found(engine, 'f', [0, 127, 128, 150, 199])).toEqual([0, 127]);
    await engine.segmentInfo(SEG); // applied now
    expect(await found(engine, 'f', [0, 127, 128, 150, 199])).toEqual([0, 127]);
  });

  it('does not find the keys of a chunk whose every key was removed one by one, before the removals are applied', async () => {
    const engine = await open();
    await twoChunks(engine);
    const removals: ModificationInput[] = [];
    for (let i = 128; i < 200; i++) removals.push({ type: 'REMOVE', family: 'f', key: key(i) });
    await engine.update({ segmentId: SEG, modifications: removals });
    expect(await found(engine, 'f', [127, 128, 160, 199])).toEqual([127]);
    // And a key put back into the emptied range is found, from its new chunk.
    await putAll(engine, SEG, 'f', 150, 151);
    expect(await found(engine, 'f', [127, 128, 150, 199])).toEqual([127, 150]);
  });

  it('does not find the keys of a middle chunk a range removal emptied, when the family is not cached', async () => {
    const at = location();
    let engine = await SegmentEngine.open(at, HELD);
    await engine.createSegment(SEG);
    // Appended in full chunks: k0000-k0127, k0128-k0255, k0256-k0383.
    for (let from = 0; from < 384; from += 128) await putAll(engine, SEG, 'f', from, from + 128);
    await engine.close();
    // Reopened: nothing of the family is in memory; the removal loads its directory.
    engine = await open(at);
    await engine.update({ segmentId: SEG, modifications: [{ type: 'REMOVE_RANGE', family: 'f', rangeFrom: key(128), rangeTo: key(256) }] });
    expect(await found(engine, 'f', [127, 128, 150, 255, 256, 383])).toEqual([127, 256, 383]);
  });

  it('reads a family that an apply splits between its slices as it was before the apply or after it, never between', async () => {
    const engine = await open();
    await engine.createSegment(SEG);
    await engine.createSegment(OTHER);
    await putAll(engine, SEG, 'f', 0, 100); // one chunk
    await engine.segmentInfo(SEG); // applied
    // Snapshot reads that start now run their LevelDB reads late, as on a busy thread pool.
    const held = holdLevelDbReads();
    const reading = Promise.all([engine.scan({ segmentId: SEG, maxItems: 1000, includeValues: false }), engine.segmentInfo(SEG)]);
    await held.reached(2);
    // The family's chunk is the first write of the apply's window (its first slice), then over a MiB of
    // other writes, then an update that splits that chunk: its new right half goes in the last slice.
    await putAll(engine, SEG, 'f', 0, 1, () => Buffer.from('touched'));
    for (let i = 0; i < 12; i++) await engine.update({ segmentId: OTHER, modifications: [{ family: '', key: Buffer.from(`big${i}`), value: Buffer.alloc(128 * 1024, i) }] });
    const inserted: ModificationInput[] = [];
    for (let i = 0; i < 40; i++) inserted.push({ type: 'INSERT', family: 'f', key: Buffer.from(`${key(50)}-${i}`), value: Buffer.from('new') });
    await engine.update({ segmentId: SEG, modifications: inserted });
    // Between the apply's slices: the family's pages (located like point reads, in memory) and a
    // Get; then the held snapshot reads go on, and end before the last slice.
    let between = false;
    let pages: Awaited<ReturnType<SegmentEngine['iterate']>>[] = [];
    const slices = afterNextChainedWrite(async () => {
      between = true;
      pages = await Promise.all([
        engine.iterate({ segmentId: SEG, family: 'f', maxItems: 1000, includeValues: true }),
        engine.iterate({ segmentId: SEG, family: 'f', maxItems: 1000, from: key(10) }),
        engine.iterate({ segmentId: SEG, family: 'f', maxItems: 1000, reverse: true }),
        engine.iterate({ segmentId: SEG, family: 'f', maxItems: 7, to: key(50), toInclusive: true, reverse: true }),
      ]);
      held.release();
      await reading;
    });
    await engine.segmentInfo(OTHER); // the apply
    slices.restore();
    expect(between).toBe(true);
    const [scan, info] = await reading;
    const keysOf = (items: { key: Uint8Array }[]) => items.map((e) => Buffer.from(e.key).toString());
    const before = Array.from({ length: 100 }, (_, i) => key(i).toString());
    expect(keysOf(scan.items)).toEqual(before);
    expect(info.entryCount).toBe('100');
    // The pages read during the apply: every write of it, all of them acknowledged before.
    const after = [...before, ...inserted.map((m) => Buffer.from(m.key!).toString())].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const [forward, from, reverse, short] = pages;
    expect(keysOf(forward.items)).toEqual(after);
    expect(Buffer.from(forward.items[0].value).toString()).toBe('touched');
    expect(keysOf(from.items)).toEqual(after.filter((k) => k >= key(10).toString()));
    expect(keysOf(reverse.items)).toEqual([...after].reverse());
    expect(keysOf(short.items)).toEqual(
      after
        .filter((k) => k <= key(50).toString())
        .reverse()
        .slice(0, 7),
    );
    expect(short.done).toBe(false);
    expect(engine.commitStats.applies).toBe(2);
  });

  it('refuses to delete a segment whose logged writes are not applied once a log write failed, and keeps them', async () => {
    const at = location();
    const engine = await SegmentEngine.open(at, HELD);
    await engine.createSegment(SEG);
    await putAll(engine, SEG, 'f', 0, 1); // in the log, not in LevelDB
    await engine.update({ segmentId: SEG, modifications: [{ family: '', key: Buffer.from('plain'), value: Buffer.from('p') }] });
    {
      // The delete comes while the segment's newest write is on its way to the log, and that write fails.
      using _fault = failNextLogWrite('EIO: i/o error, write');
      const failing = putAll(engine, SEG, 'f', 1, 2);
      const deleting = engine.deleteSegment(SEG);
      await expect(failing).rejects.toThrow('EIO');
      await expect(deleting).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    }
    await engine.close();

    // After a restart the segment is still there with what was acknowledged; deleting it now works,
    // and nothing of it comes back, nor in a segment created again with the same id.
    let again = await SegmentEngine.open(at, HELD);
    expect((await again.listSegments()).map((s) => [s.segmentId, s.entryCount])).toEqual([[SEG, '2']]);
    expect(await again.deleteSegment(SEG)).toBe(true);
    await again.close();
    again = await open(at);
    expect(await again.listSegments()).toEqual([]);
    await again.createSegment(SEG);
    expect(await found(again, 'f', [0, 1])).toEqual([]);
    expect((await again.segmentInfo(SEG)).entryCount).toBe('0');
  });

  it("makes a segment's clear durable before it drops the segment's record, so a power cut cannot leave its data behind", async () => {
    const at = location();
    // A small memtable: the segment's data is in table files, as a store's older data is.
    const engine = await open(at, { ...HELD, logBytes: 0, writeBufferBytes: 1024 * 1024 });
    await engine.createSegment(SEG);
    for (let i = 0; i < 48; i++) await engine.update({ segmentId: SEG, modifications: [{ family: '', key: key(i), value: Buffer.alloc(64 * 1024, i) }] });
    // What a power cut may leave at the moment the record's delete is written: the table files, and
    // none of the log files' unsynced writes (here, none of the log files).
    const copy = tempDir('kvt-read-states-cut-');
    defer(copy.dispose);
    const proto = ClassicLevel.prototype as unknown as { del: (...args: unknown[]) => Promise<void> };
    const del = proto.del;
    proto.del = function (this: unknown, ...args: unknown[]) {
      proto.del = del;
      fs.cpSync(at, copy.path, { recursive: true, filter: (src) => !src.endsWith('.log') && !src.endsWith('LOCK') });
      return del.apply(this, args);
    };
    try {
      expect(await engine.deleteSegment(SEG)).toBe(true);
    } finally {
      proto.del = del;
    }
    const db = new ClassicLevel<Buffer, Buffer>(copy.path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    try {
      const prefix = segmentDataPrefix(encodeSegmentId(SEG));
      expect(await db.keys({ gte: prefix, lt: prefixSuccessor(prefix) }).all()).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
