import { describe, expect, it } from 'vitest';
import { inBounds, KeyBounds, prefixSuccessor } from '../../../proto/key-bounds';

const b = (...bytes: number[]): Buffer => Buffer.from(bytes);
const OPEN: KeyBounds = { prefix: b(), from: b(), to: b(), toInclusive: false, reverse: false };

/** The keys of `keys` that `bounds` admit, as hex. */
const admitted = (keys: Buffer[], bounds: Partial<KeyBounds>): string[] => keys.filter((k) => inBounds(k, { ...OPEN, ...bounds })).map((k) => k.toString('hex'));

describe('prefixSuccessor', () => {
  it('drops trailing 0xff bytes before incrementing, and has none for a prefix of only 0xff', () => {
    expect(prefixSuccessor(b(0x61))).toEqual(b(0x62));
    expect(prefixSuccessor(b(0x61, 0xff, 0xff))).toEqual(b(0x62));
    expect(prefixSuccessor(b(0x00, 0xfe, 0xff))).toEqual(b(0x00, 0xff));
    expect(prefixSuccessor(b(0xff, 0xff))).toBeUndefined();
    expect(prefixSuccessor(b())).toBeUndefined();
  });

  it('leaves the prefix it is given as it was', () => {
    const prefix = b(0x61, 0x62);
    prefixSuccessor(prefix);
    expect(prefix).toEqual(b(0x61, 0x62));
  });
});

describe('inBounds', () => {
  const keys = [b(), b(0x61), b(0x61, 0x00), b(0x61, 0x62), b(0x61, 0x62, 0x63), b(0x62), b(0xff)];

  it('admits every key, the empty one included, when all bounds are open', () => {
    expect(admitted(keys, {})).toEqual(keys.map((k) => k.toString('hex')));
  });

  it('admits only keys starting with the prefix, and none shorter than it', () => {
    expect(admitted(keys, { prefix: b(0x61, 0x62) })).toEqual(['6162', '616263']);
    expect(admitted(keys, { prefix: b(0x61, 0x62, 0x63, 0x64) })).toEqual([]);
  });

  it('takes from as inclusive, and to as exclusive unless toInclusive', () => {
    expect(admitted(keys, { from: b(0x61, 0x62), to: b(0x62) })).toEqual(['6162', '616263']);
    expect(admitted(keys, { from: b(0x61, 0x62), to: b(0x62), toInclusive: true })).toEqual(['6162', '616263', '62']);
    expect(admitted(keys, { to: b(0x61, 0x00) })).toEqual(['', '61']);
  });

  it('resumes strictly after the resume point going forward, strictly before it in reverse', () => {
    expect(admitted(keys, { after: b(0x61, 0x62) })).toEqual(['616263', '62', 'ff']);
    expect(admitted(keys, { after: b(0x61, 0x62), reverse: true })).toEqual(['', '61', '6100']);
  });
});
