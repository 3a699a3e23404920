/**
 * Reads see every acknowledged write and nothing else, also while the durable log holds writes that
 * LevelDB does not have yet (issue 38): point reads of keyed families never take LevelDB's floor
 * chunk for a chunk the overlay changed; iterators, scans and counts never read LevelDB between the
 * slices of one apply; a deleted segment's logged writes never come back.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClassicLevel } from 'classic-level';
import { MAX_CHUNK_ENTRIES } from '../../../segmentstore/storage/chunk-codec';
import { encodeSegmentId, prefixSuccessor, segmentDataPrefix } from '../../../segmentstore/storage/key-codec';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../../segmentstore/storage/segment-state';
import type { ModificationInput } from '../../../segmentstore/storage/validation';
import { failNextLogWrite } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';

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

describe('SegmentEngine reads while the log holds writes LevelDB does not have', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  function location(): string {
    const dir = tempDir('kvt-read-states-');
    cleanup.push(dir.dispose);
    return path.join(dir.path, 'db');
  }
  async function open(at = location(), options: SegmentEngineOptions = HELD): Promise<SegmentEngine> {
    const engine = await SegmentEngine.open(at, options);
    cleanup.push(() => engine.close());
    return engine;
  }
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

});
