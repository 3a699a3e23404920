import { describe, expect, it } from 'vitest';
import { after, KIND, keyOf, lateKey, positionOf, supersessionKey } from '../../../client/revisions/key-layout';
import { CULL_MAX_ITEMS, planCull, supersessionOf, Timeline } from '../../../client/revisions/retention';
import { tidAt, T0 } from '../../suites/revisions-context';

const pos = (rev: number) => positionOf(rev, tidAt(T0));
const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('hex'));
const show = (mods: ReturnType<typeof planCull>) => mods.map((m) => (m.type === 'removeRange' ? { range: [hex(m.from), hex(m.to), hex(m.prefix)] } : { [m.type]: hex(m.key) }));

function timeline(expired: number[], lates: [number, number][] = []): Timeline {
  return {
    head: null,
    lates: lates.map(([rev, time]) => ({ position: pos(rev), time })).sort((a, b) => Buffer.compare(a.position, b.position)),
    expired: expired.map((rev, i) => ({ key: supersessionKey(T0 + i, pos(rev)), position: pos(rev) })),
    complete: true,
  };
}

describe('retention: the cull a write carries', () => {
  const cutoff = T0 + 100;

  it('says when a write supersedes the latest and when it arrives late', () => {
    expect(supersessionOf(null, pos(1), T0)).toEqual({ entry: null, late: false });
    expect(supersessionOf(pos(1), pos(2), T0)).toEqual({ entry: { type: 'put', key: supersessionKey(T0, pos(1)), value: Buffer.of(1) }, late: false });
    expect(supersessionOf(pos(2), pos(2), T0)).toEqual({ entry: null, late: false });
    expect(supersessionOf(pos(2), pos(1), T0).late).toBe(true);
  });

  it('removes every render, chunk and late write up to the highest expired supersession, and the supersessions read', () => {
    const t = timeline([3, 5]);
    const top = pos(5);
    expect(show(planCull(t, cutoff, [pos(9)]))).toEqual([
      { range: [hex(keyOf(KIND.RENDER, top)), hex(Buffer.of(KIND.RENDER + 1)), undefined] },
      { range: [hex(keyOf(KIND.CHUNK, top)), hex(Buffer.of(KIND.CHUNK + 1)), undefined] },
      { range: [hex(keyOf(KIND.LATE, top)), hex(Buffer.of(KIND.LATE + 1)), undefined] },
      { range: [hex(Buffer.of(KIND.SUPERSEDED)), hex(after(t.expired[1].key)), undefined] },
    ]);
  });

  it('goes around late writes still in their window, and removes expired ones above the range one by one', () => {
    const t = timeline(
      [5],
      [
        [2, cutoff + 1],
        [8, cutoff - 1],
      ],
    );
    const mods = show(planCull(t, cutoff, [pos(9)]));
    expect(mods.slice(0, 2)).toEqual([
      { range: [hex(keyOf(KIND.RENDER, pos(5))), hex(keyOf(KIND.RENDER, pos(2))), undefined] },
      { range: [hex(keyOf(KIND.RENDER, after(pos(2)))), hex(Buffer.of(KIND.RENDER + 1)), undefined] },
    ]);
    expect(mods).toHaveLength(6 + 1 + 3);
    expect(mods.slice(7)).toEqual([{ remove: hex(keyOf(KIND.RENDER, pos(8))) }, { range: [undefined, undefined, hex(keyOf(KIND.CHUNK, pos(8)))] }, { remove: hex(lateKey(pos(8))) }]);
    // The render being written is never removed one by one (it is written after the cull).
    expect(planCull(t, cutoff, [pos(8)])).toHaveLength(7);
  });

  it('leaves the range and its supersessions to a later write when too many late writes cut it', () => {
    const guards: [number, number][] = Array.from({ length: CULL_MAX_ITEMS }, (_, i) => [i + 1, cutoff + 1]);
    expect(planCull(timeline([100], guards), cutoff, [pos(200)])).toEqual([]);
    expect(planCull(timeline([]), cutoff, [pos(1)])).toEqual([]);
  });
});
