/**
 * The segment catalog through the engine: a deleted segment never comes back with its old data (not
 * after a delete that a crash interrupted, not from writes the log had not applied yet when it was
 * deleted), and a re-created segment continues its namesake's versions, so that no version handed out
 * before the delete matches an entry written after it.
 */
import { describe, expect, it } from 'vitest';
import { ClassicLevel } from 'classic-level';
import { encodeSegmentId, segmentRecordKey } from '../../../segmentstore/storage/key-codec';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import { scratchEngines } from '../../harness/scratch-engines';

const SEG = '9';
const b = (s: string): Buffer => Buffer.from(s);

const { location, open } = scratchEngines('kvt-catalog-');

/** The value of family `f` key `k` and of family-less key `n` ('' for none found). */
async function read(engine: SegmentEngine): Promise<string[]> {
  const { entries } = await engine.get({
    segmentId: SEG,
    keys: [
      { family: 'f', key: b('k') },
      { family: '', key: b('n') },
    ],
  });
  return entries.map((e) => (e.found ? Buffer.from(e.value).toString() : ''));
}

async function writeBoth(engine: SegmentEngine): Promise<void> {
  await engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: b('k'), value: b('old') }] });
  await engine.update({ segmentId: SEG, modifications: [{ family: '', key: b('n'), value: b('old') }] });
}

describe('SegmentCatalog', () => {
  it('finishes on open a delete that a crash interrupted: the segment is gone, and a re-created one is empty', async () => {
    const where = location();
    const first = await SegmentEngine.open(where, { expirySweepIntervalMs: 0 });
    await first.createSegment(SEG, 's/t#0');
    await writeBoth(first);
    await first.close();
    // The crash came right after the delete marked the record: its data is still all there.
    const db = new ClassicLevel<Buffer, Buffer>(where, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.put(segmentRecordKey(encodeSegmentId(SEG)), b(JSON.stringify({ table: 's/t#0', state: 'deleting', createdAtMs: 1 })));
    await db.close();

    const engine = await open(where);
    expect((await engine.listSegments()).map((s) => s.segmentId)).toEqual([]);
    await expect(engine.get({ segmentId: SEG, keys: [{ family: 'f', key: b('k') }] })).rejects.toMatchObject({ code: 'SEGMENT_NOT_FOUND' });
    expect(await engine.createSegment(SEG)).toBe(true);
    expect(await read(engine)).toEqual(['', '']);
    expect((await engine.segmentInfo(SEG)).entryCount).toBe('0');
  });

  it('clears a deleted segment only after the log applied its writes, so none comes back in a re-created one', async () => {
    const where = location();
    // Applies wait for a reader or the close: the writes are only in the log and memory when the delete comes.
    let engine = await open(where, { logApplyMs: 600_000 });
    await engine.createSegment(SEG);
    await writeBoth(engine);
    expect(await engine.deleteSegment(SEG)).toBe(true);
    expect(await engine.createSegment(SEG)).toBe(true);
    expect(await read(engine)).toEqual(['', '']);
    await engine.close();
    engine = await open(where);
    expect(await read(engine)).toEqual(['', '']);
    const page = await engine.iterate({ segmentId: SEG, family: 'f', maxItems: 10 });
    expect(page.items).toEqual([]);
  });

  it('continues the versions of a deleted segment when it is re-created: an old version matches nothing new', async () => {
    const where = location();
    let engine = await open(where);
    await engine.createSegment(SEG);
    const before = await engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: b('k'), value: b('old') }] });
    expect(await engine.deleteSegment(SEG)).toBe(true);
    expect(await engine.createSegment(SEG)).toBe(true);
    const after = await engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: b('k'), value: b('new') }] });
    expect(BigInt(after.sequences[0])).toBeGreaterThan(BigInt(before.sequences[0]));
    // A caller still holding the version from before the delete must not overwrite the new entry.
    const stale = { kind: 'VERSION', segmentId: SEG, sequence: before.sequences[0] } as const;
    await expect(engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: b('k'), value: b('lost'), condition: stale }] })).rejects.toMatchObject({ code: 'BAD_KEY_VERSION' });

    // The same across a reopen between the delete and the re-create.
    expect(await engine.deleteSegment(SEG)).toBe(true);
    await engine.close();
    engine = await open(where);
    expect(await engine.createSegment(SEG)).toBe(true);
    const again = await engine.update({ segmentId: SEG, modifications: [{ family: 'f', key: b('k'), value: b('newer') }] });
    expect(BigInt(again.sequences[0])).toBeGreaterThan(BigInt(after.sequences[0]));
  });
});
