/**
 * Iterator bounds: user-key bounds (prefix, from, to, resume point) as the engine turns them into
 * one lower and one upper bound (a tie between an inclusive and an exclusive bound is exclusive) and
 * into LevelDB ranges over storage keys, and the pages an engine answers with them.
 */
import { describe, expect, it } from 'vitest';
import { encodeSegmentId, familyPrefix, segmentDataPrefix } from '../../../segmentstore/storage/key-codec';
import { KeyBounds, storageRange, userBounds } from '../../../segmentstore/storage/key-range';
import { scratchEngines } from '../../harness/scratch-engines';

const b = (s: string): Buffer => Buffer.from(s);
const bounds = (o: Partial<KeyBounds>): KeyBounds => ({ prefix: b(''), from: b(''), to: b(''), toInclusive: false, reverse: false, ...o });

describe('userBounds', () => {
  it('resumes strictly after the inclusive from key it ties with (forward)', () => {
    expect(userBounds(bounds({ from: b('k'), after: b('k') })).lower).toEqual({ key: b('k'), inclusive: false });
    expect(userBounds(bounds({ prefix: b('k'), after: b('k') })).lower).toEqual({ key: b('k'), inclusive: false });
  });

  it('resumes strictly before the inclusive to key it ties with (reverse)', () => {
    expect(userBounds(bounds({ to: b('k'), toInclusive: true, reverse: true, after: b('k') })).upper).toEqual({ key: b('k'), inclusive: false });
  });

  it('bounds a prefix above by its successor', () => {
    expect(userBounds(bounds({ prefix: b('ab') }))).toEqual({ lower: { key: b('ab'), inclusive: true }, upper: { key: b('ac'), inclusive: false } });
  });
});

describe('storageRange', () => {
  const family = familyPrefix(segmentDataPrefix(encodeSegmentId('1')), '');
  const at = (s: string): Buffer => Buffer.concat([family, b(s)]);

  it('keeps a prefix iteration within the prefix', () => {
    expect(storageRange(family, bounds({ prefix: b('ab') }))).toEqual({ gte: at('ab'), lt: at('ac') });
  });

  it('starts a resumed iteration after its from key', () => {
    expect(storageRange(family, bounds({ from: b('ab'), after: b('ab') }))).toMatchObject({ gt: at('ab') });
  });
});

describe('SegmentEngine.iterate of family-less keys', () => {
  const scratch = scratchEngines('kvt-bounds-');

  it('returns only the keys of its prefix, and resumes after the from key without repeating it', async () => {
    const engine = await scratch.open();
    await engine.createSegment('1');
    for (const k of ['aa', 'ab', 'ab1', 'ab2', 'ac', 'b']) await engine.update({ segmentId: '1', modifications: [{ family: '', key: b(k), value: b(k) }] });
    const keys = (page: { items: { key: Uint8Array }[] }): string[] => page.items.map((i) => Buffer.from(i.key).toString());

    expect(keys(await engine.iterate({ segmentId: '1', family: '', prefix: b('ab'), maxItems: 10 }))).toEqual(['ab', 'ab1', 'ab2']);
    const first = await engine.iterate({ segmentId: '1', family: '', from: b('ab'), maxItems: 1 });
    expect(keys(first)).toEqual(['ab']);
    const next = await engine.iterate({ segmentId: '1', family: '', from: b('ab'), hasAfter: true, after: b('ab'), maxItems: 2 });
    expect(keys(next)).toEqual(['ab1', 'ab2']);
  });
});
