/**
 * The family filter (family-filter.ts): a write into a family the filter says never had one skips
 * the read of its first chunk, so the filter must never say so of a family that exists. Checked on
 * the filter itself and through the engine: families written before a reopen (sole chunks, several
 * chunks, in several segments) keep every key when written again after the filter learnt them, and
 * a family created while the filter is still learning is known too.
 */
import { ClassicLevel } from 'classic-level';
import { describe, expect, it } from 'vitest';
import { FamilyFilter } from '../../../segmentstore/storage/chunks/family-filter';
import { encodeSegmentId, familyPrefix, segmentDataPrefix } from '../../../segmentstore/storage/key-codec';
import type { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import { tempDir } from '../../harness/process';
import { scratchEngines } from '../../harness/scratch-engines';

const b = (s: string): Buffer => Buffer.from(s);
const idOf = (segmentId: string, family: string): string => familyPrefix(segmentDataPrefix(encodeSegmentId(segmentId)), family).toString('latin1');

describe('FamilyFilter', () => {
  it('calls no family absent before it has learnt, and never a member afterwards', async () => {
    const filter = new FamilyFilter();
    const members = Array.from({ length: 20_000 }, (_, i) => idOf(String(1 + (i % 7)), `page/${i}`));
    for (const id of members.slice(0, 10_000)) filter.add(id);
    expect(filter.absent(idOf('1', 'never written'))).toBe(false);
    using dir = tempDir('kvt-filter-empty-');
    const db = new ClassicLevel<Buffer, Buffer>(dir.path, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    try {
      await filter.learn(db, [segmentDataPrefix(encodeSegmentId('1'))]);
    } finally {
      await db.close();
    }
    expect(filter.ready).toBe(true);
    for (const id of members.slice(0, 10_000)) expect(filter.absent(id)).toBe(false);
    for (const id of members.slice(10_000)) filter.add(id);
    for (const id of members) expect(filter.absent(id)).toBe(false);
    // Families never added are (almost all) absent: the filter saves their reads.
    const strangers = Array.from({ length: 10_000 }, (_, i) => idOf(String(1 + (i % 7)), `other/${i}`));
    expect(strangers.filter((id) => filter.absent(id)).length).toBeGreaterThan(9_950);
  });
});

describe('an engine with a family filter', () => {
  const { location, open } = scratchEngines('kvt-family-filter-');
  const SEGMENTS = ['1', '2', '70000'];
  const wide = (i: number): Buffer => b(`k${String(i).padStart(4, '0')}`);

  /** Families of one key (sole chunks), of 300 keys (several chunks) and a family-less key, in each segment. */
  async function fill(engine: SegmentEngine): Promise<void> {
    for (const seg of SEGMENTS) {
      await engine.createSegment(seg);
      for (let f = 0; f < 50; f++) await engine.update({ segmentId: seg, modifications: [{ family: `small/${f}`, key: b('a'), value: b(`${seg}:${f}`) }] });
      for (const from of [0, 150]) await engine.update({ segmentId: seg, modifications: Array.from({ length: 150 }, (_, i) => ({ family: 'wide', key: wide(from + i), value: b(`w${from + i}`) })) });
      await engine.update({ segmentId: seg, modifications: [{ key: b('plain'), value: b('p') }] });
    }
  }

  async function keysOf(engine: SegmentEngine, seg: string, family: string): Promise<string[]> {
    const page = await engine.iterate({ segmentId: seg, family, maxItems: 1000 });
    return page.items.map((item) => Buffer.from(item.key).toString());
  }

  it('keeps every key of families written before a reopen when they are written again', async () => {
    const where = location();
    const first = await open(where);
    await fill(first);
    await first.close();

    const engine = await open(where);
    // Written at once, while the filter still learns: every family may exist then.
    const early = SEGMENTS.map((seg) => engine.update({ segmentId: seg, modifications: [{ family: 'small/0', key: b('c'), value: b('early') }] }));
    expect(await engine.familiesLearnt()).toBe(true);
    await Promise.all(early);
    for (const seg of SEGMENTS) {
      for (let f = 0; f < 50; f++) await engine.update({ segmentId: seg, modifications: [{ family: `small/${f}`, key: b('b'), value: b('new') }] });
      await engine.update({ segmentId: seg, modifications: [{ family: 'wide', key: b('zz'), value: b('new') }] });
      // A family never written: created, with only its key.
      await engine.update({ segmentId: seg, modifications: [{ family: 'fresh', key: b('x'), value: b('new') }] });
    }
    for (const seg of SEGMENTS) {
      for (let f = 0; f < 50; f++) expect(await keysOf(engine, seg, `small/${f}`)).toEqual(f === 0 ? ['a', 'b', 'c'] : ['a', 'b']);
      expect(await keysOf(engine, seg, 'wide')).toEqual([...Array.from({ length: 300 }, (_, i) => wide(i).toString()), 'zz']);
      expect(await keysOf(engine, seg, 'fresh')).toEqual(['x']);
      const got = await engine.get({ segmentId: seg, keys: [{ family: 'small/7', key: b('a') }, { key: b('plain') }] });
      expect(got.entries.map((e) => Buffer.from(e.value).toString())).toEqual([`${seg}:7`, 'p']);
    }
  });

  it('knows a family created while it learns, and one created again after its segment was deleted', async () => {
    // No directory or chunk cached: every write of a family not staged right now asks the filter.
    const engine = await open(location(), { directoryCacheBytes: 1, chunkCacheBytes: 1 });
    await engine.createSegment('5');
    // Written at once after opening: the scan has not read it (it is in the log, not yet in LevelDB).
    await engine.update({ segmentId: '5', modifications: [{ family: 'early', key: b('a'), value: b('1') }] });
    expect(await engine.familiesLearnt()).toBe(true);
    // Applies the log to LevelDB (the write leaves the overlay); another family takes the caches' one place.
    await engine.update({ segmentId: '5', modifications: [{ family: 'other', key: b('a'), value: b('1') }] });
    await engine.segmentInfo('5');
    await engine.update({ segmentId: '5', modifications: [{ family: 'early', key: b('b'), value: b('2') }] });
    expect(await keysOf(engine, '5', 'early')).toEqual(['a', 'b']);

    await engine.deleteSegment('5');
    await engine.createSegment('5');
    await engine.update({ segmentId: '5', modifications: [{ family: 'early', key: b('c'), value: b('3') }] });
    await engine.update({ segmentId: '5', modifications: [{ family: 'other', key: b('a'), value: b('1') }] });
    await engine.segmentInfo('5');
    await engine.update({ segmentId: '5', modifications: [{ family: 'early', key: b('d'), value: b('4') }] });
    expect(await keysOf(engine, '5', 'early')).toEqual(['c', 'd']);
  });

  it('answers a conditional insert into an existing family after a reopen as the family holds it', async () => {
    const where = location();
    const first = await open(where);
    await first.createSegment('9');
    const put = await first.update({ segmentId: '9', modifications: [{ family: 'doc', key: b('head'), value: b('v1') }] });
    await first.close();
    const engine = await open(where);
    expect(await engine.familiesLearnt()).toBe(true);
    // INSERT of a key that exists is refused; a replace at the version it had succeeds.
    await expect(engine.update({ segmentId: '9', modifications: [{ type: 'INSERT', family: 'doc', key: b('head'), value: b('v2') }] })).rejects.toMatchObject({ code: 'BAD_KEY_VERSION' });
    const condition = { kind: 'VERSION', segmentId: '9', sequence: put.sequences[0] } as const;
    await engine.update({ segmentId: '9', modifications: [{ family: 'doc', key: b('head'), value: b('v2'), condition }] });
    expect(await keysOf(engine, '9', 'doc')).toEqual(['head']);
  });
});
