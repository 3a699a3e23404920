/**
 * Expiry at the edges of the engine's write and read paths: a condition checked by the chunk merge
 * sees an expired entry as absent, an iterator page whose first chunks hold only expired entries reads
 * on instead of ending the iteration, and the sweeper removes a family-less entry only while it still
 * carries the expiry its index entry names.
 */
import { describe, expect, it } from 'vitest';
import { MAX_CHUNK_ENTRIES } from '../../../segmentstore/storage/chunks/chunk-codec';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { ModificationInput } from '../../../segmentstore/storage/validation';
import { scratchEngines } from '../../harness/scratch-engines';

const SEG = '3';
const b = (s: string): Buffer => Buffer.from(s);
const key = (i: number): Buffer => b(`k${String(i).padStart(4, '0')}`);

const scratch = scratchEngines('kvt-expiry-');
const location = scratch.location;

/** An engine over a fresh directory whose clock reads `clock.now`. */
function open(clock: { now: number }, where = location()): Promise<SegmentEngine> {
  return scratch.open(where, { clock: () => clock.now });
}

describe('a condition on a keyed entry that has expired', () => {
  it('finds the key absent: an INSERT succeeds and the expired version no longer matches', async () => {
    const clock = { now: 1_000_000 };
    const engine = await open(clock);
    await engine.createSegment(SEG);
    const first = await engine.update({
      segmentId: SEG,
      modifications: [
        { family: 'f', key: b('a'), value: b('short-lived'), ttlMs: '1000' },
        { family: 'f', key: b('b'), value: b('kept') },
      ],
    });
    clock.now += 1000;
    const stale = { kind: 'VERSION', segmentId: SEG, sequence: first.sequences[0] } as const;
    await expect(engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: b('a'), value: b('x'), condition: stale }] })).rejects.toMatchObject({ code: 'NO_SUCH_KEY' });
    const inserted = await engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: b('a'), type: 'INSERT', value: b('again') }] });
    const got = await engine.get({ segmentId: SEG, keys: [{ family: 'f', key: b('a') }] });
    expect(got.entries[0]).toMatchObject({ found: true, sequence: inserted.sequences[0] });
    expect(Buffer.from(got.entries[0].value).toString()).toBe('again');
  });
});

describe('an iterator page over chunks of expired entries', () => {
  it('reads past them to the live keys instead of ending the iteration', async () => {
    const clock = { now: 1_000_000 };
    const engine = await open(clock);
    await engine.createSegment(SEG);
    // Three full chunks of entries that expire, appended one after the other, then live keys after them.
    for (let c = 0; c < 3; c++) {
      const mods: ModificationInput[] = [];
      for (let i = c * MAX_CHUNK_ENTRIES; i < (c + 1) * MAX_CHUNK_ENTRIES; i++) mods.push({ family: 'f', key: key(i), value: b('gone'), ttlMs: '1000' });
      await engine.update({ segmentId: SEG, modifications: mods });
    }
    const live = [1000, 1001, 1002].map(key);
    await engine.update({ segmentId: SEG, modifications: live.map((k) => ({ family: 'f', key: k, value: b('live') })) });
    clock.now += 1000;

    const first = await engine.iterate({ segmentId: SEG, family: 'f', maxItems: 1 });
    expect(first.items.map((i) => Buffer.from(i.key).toString())).toEqual(['k1000']);
    expect(first.done).toBe(false);
    const whole = await engine.iterate({ segmentId: SEG, family: 'f', maxItems: 2 });
    expect(whole.items.map((i) => Buffer.from(i.key).toString())).toEqual(['k1000', 'k1001']);
  });
});

describe('the expiry sweeper', () => {
  it('keeps a family-less entry rewritten without an expiry after its first write was due', async () => {
    const clock = { now: 1_000_000 };
    const where = location();
    let engine = await open(clock, where);
    await engine.createSegment(SEG);
    await engine.update({ segmentId: SEG, modifications: [{ family: '', key: b('n'), value: b('short-lived'), ttlMs: '1000' }] });
    await engine.update({ segmentId: SEG, modifications: [{ family: '', key: b('n'), value: b('kept') }] });
    await engine.update({ segmentId: SEG, modifications: [{ family: '', key: b('m'), value: b('due'), ttlMs: '1000' }] });
    // Reopened: LevelDB holds both writes, nothing is staged, and the first write's index entry is due.
    await engine.close();
    engine = await open(clock, where);
    clock.now += 1000;
    expect(await engine.sweepExpired()).toBe(1);
    const got = await engine.get({ segmentId: SEG, keys: [{ family: '', key: b('n') }] });
    expect(got.entries[0].found).toBe(true);
    expect(Buffer.from(got.entries[0].value).toString()).toBe('kept');
    expect((await engine.segmentInfo(SEG)).entryCount).toBe('1');
  });
});
