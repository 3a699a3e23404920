/**
 * The checkers the model tests rely on, on small hand-made cases: reads against one writer's chain of
 * states (engine-history.ts), the chunk-aimed updates (chunk-workload.ts) and the padded values of
 * the wide-family workload (wide-workload.ts). A checker that accepts everything tests nothing.
 */
import { describe, expect, it } from 'vitest';
import { aimedUpdate, touchThenSplit } from '../../harness/chunk-workload';
import { entryString, FamilyModel, keyName } from '../../harness/engine-model';
import { checkReads, FamilyChain, Observation, TimedRead } from '../../harness/engine-history';
import { mulberry32 } from '../../harness/oracle';
import { paddedValues, WIDE_VALUE_BYTES } from '../../harness/wide-workload';

/** A family of keys `keyName(from)` … `keyName(to - 1)` written by `tag` at sequences from `sequence`. */
function family(from: number, to: number, tag: string, sequence = 1): FamilyModel {
  return new Map(Array.from({ length: to - from }, (_, i) => [keyName(from + i), { value: `${tag}${from + i}`, sequence: sequence + i, expiresAt: 0 }]));
}

function items(state: FamilyModel, from = '', to = '~'): string[] {
  return [...state]
    .filter(([k]) => k >= from && k < to)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, e]) => `${k}=${entryString(e.value, e.sequence)}`);
}

/** A chain on family 'f': s0 = keys 0-9; update 1 (times 10-20) adds keys 10-19; update 2 (30-40) removes keys 0-4. */
function chain(): { chain: FamilyChain; s: FamilyModel[] } {
  const s0 = family(0, 10, 'a');
  const s1 = new Map([...s0, ...family(10, 20, 'b', 100)]);
  const s2 = new Map([...s1].filter(([k]) => k >= keyName(5)));
  const c = new FamilyChain('f', s0);
  c.complete(c.issue('add 10-19', s1, 10), 20);
  c.complete(c.issue('remove 0-4', s2, 30), 40);
  return { chain: c, s: [s0, s1, s2] };
}

function check(c: FamilyChain, invokedAt: number, completedAt: number, o: Observation): string[] {
  const read: TimedRead = { label: 'read', invokedAt, completedAt, observations: [o] };
  return checkReads([read], new Map([['f', c]]));
}

describe("checkReads against one writer's chain of states", () => {
  it('accepts a read that saw any state between the updates completed before it and those begun before it ended', () => {
    const { chain: c, s } = chain();
    expect(check(c, 15, 16, { kind: 'range', family: 'f', seen: items(s[0]) })).toEqual([]);
    expect(check(c, 15, 16, { kind: 'range', family: 'f', seen: items(s[1]) })).toEqual([]);
    expect(check(c, 25, 35, { kind: 'range', family: 'f', seen: items(s[2]) })).toEqual([]);
    expect(check(c, 25, 26, { kind: 'keys', family: 'f', keys: [keyName(3), keyName(12)], seen: [entryString('a3', 4), entryString('b12', 102)] })).toEqual([]);
    expect(check(c, 25, 26, { kind: 'count', families: ['f'], count: 20, bytes: [...s[1]].reduce((n, [k, e]) => n + k.length + e.value.length, 0) })).toEqual([]);
  });

  it('refuses a stale read: a key an update completed before the read began had removed', () => {
    const { chain: c } = chain();
    const problems = check(c, 41, 42, { kind: 'keys', family: 'f', keys: [keyName(2)], seen: [entryString('a2', 3)] });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('s2…s2');
  });

  it('refuses a range read that shows part of one update, naming it, and one missing keys every possible state holds', () => {
    const { chain: c, s } = chain();
    const torn = [...items(s[0]), ...items(s[1], keyName(10), keyName(14))];
    const problems = check(c, 15, 16, { kind: 'range', family: 'f', seen: torn });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('update 1: add 10-19 wrote 10 entries in the range; the read shows 4 of them');
    const missing = check(c, 15, 16, { kind: 'range', family: 'f', lower: { key: keyName(5), inclusive: true }, seen: items(s[0], keyName(7)) });
    expect(missing[0]).toContain(`missing 2 keys that every one of those states holds: ${keyName(5)} ${keyName(6)}`);
  });

  it('refuses a multi-key read whose keys each match a different state', () => {
    const { chain: c } = chain();
    // k0002 as before update 2 and k0012 absent as before update 1: no one state has both.
    const problems = check(c, 5, 35, { kind: 'keys', family: 'f', keys: [keyName(2), keyName(12)], seen: [null, null] });
    expect(problems[0]).toContain('no one state all of them');
  });

  it('refuses a count that is no sum of one possible state per family', () => {
    const { chain: c } = chain();
    expect(check(c, 5, 35, { kind: 'count', families: ['f'], count: 12, bytes: 0 })[0]).toContain('counted 12 entries');
  });
});

describe('the chunk-aimed updates', () => {
  const state = family(0, 100, 'v');
  const lowers = ['', keyName(20), keyName(40), keyName(60), keyName(80)];
  const spec = { segmentId: '1', tag: 't', keySpace: 100, minValue: 600, maxValue: 900 };

  it("remove whole chunks from a chunk's lower key, cut boundaries and split chunks", () => {
    const rand = mulberry32(3);
    const kinds = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const u = aimedUpdate(rand, state, lowers, spec);
      kinds.add(u.kind);
      if (u.kind === 'chunks by a range') {
        const range = (u.ops[0] as { range: { from: string; to: string } }).range;
        expect(lowers).toContain(range.from);
        expect(range.to === '' || lowers.includes(range.to)).toBe(true);
      }
      if (u.kind === 'chunk by removes') {
        const keys = u.ops.map((o) => (o as { key: string }).key).sort();
        const c = lowers.indexOf(keys[0] < keyName(20) ? '' : keys[0]);
        expect(keys).toEqual(Array.from({ length: 20 }, (_, j) => keyName(c * 20 + j)));
      }
      if (u.kind === 'run that splits') expect(u.ops.length).toBeGreaterThan(16384 / (22 + 5 + 600));
    }
    expect(kinds.size).toBe(5);
  });

  it('touch a chunk, then split it with a run starting inside it', () => {
    const { chunk, touch, split } = touchThenSplit(mulberry32(5), state, lowers, spec);
    const key = (touch[0] as { key: string }).key;
    expect(key >= (lowers[chunk] || keyName(0)) && (chunk + 1 >= lowers.length || key < lowers[chunk + 1])).toBe(true);
    expect(split.length).toBeGreaterThan(16384 / (22 + 5 + 600));
  });
});

describe("the wide workload's padded values", () => {
  it('pads every value to a fixed length and reads it back unpadded, a mangled one as no value ever written', () => {
    const s = paddedValues();
    const bytes = s.serialize('c1.2.w003');
    expect(bytes.length).toBe(WIDE_VALUE_BYTES);
    expect(s.deserialize(bytes)).toBe('c1.2.w003');
    expect(s.deserialize(Buffer.from(bytes).subarray(0, 1_000))).toMatch(/^MANGLED\(1000 bytes/);
  });
});
