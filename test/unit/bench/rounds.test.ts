import { describe, expect, it } from 'vitest';
import { measureCaseInRounds, roundSettings } from '../../../bench/measure';
import { RawLevelPeer } from '../../../bench/peers/raw-level-peer';
import { FULL, QUICK } from '../../../bench/run';
import { CaseSpec } from '../../../bench/workloads';

describe('bench rounds', () => {
  it('splits the measured time, the op bound and W6 into equal rounds, with a full warm-up only first', () => {
    const first = roundSettings(FULL, 5, 0);
    const later = roundSettings(FULL, 5, 3);
    expect(first.measureMs * 5).toBe(FULL.measureMs);
    expect(first.w6DurationMs * 5).toBe(FULL.w6DurationMs);
    expect(first.maxOps * 5).toBeGreaterThanOrEqual(FULL.maxOps);
    expect(first.warmupMs).toBe(FULL.warmupMs);
    expect(later.warmupMs).toBe(FULL.warmupMs / 4);
    expect(QUICK.rounds).toBeGreaterThanOrEqual(2);
    expect(FULL.rounds).toBeGreaterThanOrEqual(QUICK.rounds);
  });

  it('lets the peers take turns, each round led by another, and adds each peer’s rounds up', async () => {
    const a = await RawLevelPeer.open();
    const b = await RawLevelPeer.open();
    try {
      const order: string[] = [];
      let current = '';
      const spec: CaseSpec = {
        id: 'T', workload: 'T', title: 'test puts', unit: 'ops', shape: { kind: 'closed', concurrency: 4 },
        operation(peer, _s, extra) {
          const name = peer === a ? 'a' : 'b';
          extra.calls = 0;
          return async (caller, rand) => {
            if (current !== name) order.push((current = name));
            extra.calls++;
            await peer.put(`k${caller}-${Math.floor(rand() * 100)}`, Buffer.from('v'));
            return 2;
          };
        },
      };
      const s = { ...QUICK, measureMs: 400, warmupMs: 400, maxOps: 1_000_000 };
      const result = await measureCaseInRounds([{ name: 'a', peer: a }, { name: 'b', peer: b }], spec, s, 4);
      // Warm-up and measured phase of a round run back to back: a b | b a | a b | b a.
      expect(order).toEqual(['a', 'b', 'a', 'b', 'a']);
      for (const name of ['a', 'b']) {
        const m = result.get(name);
        if (!m || m instanceof Error) throw new Error(`no measurement for ${name}: ${String(m)}`);
        expect(m.ops).toBeGreaterThan(0);
        expect(m.latency.count).toBe(m.ops);
        expect(m.unitsPerSec).toBeCloseTo(2 * m.opsPerSec, 0);
        // Counters count within each round's measured window and are summed over the 4 rounds: each
        // operation completed in a window is followed at once by its caller's next call, so the calls
        // started in the windows are exactly the operations completed in them.
        expect(m.extra?.calls).toBe(m.ops);
        expect(m.cpuSeconds).not.toBeNull();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('takes a peer whose operation fails for good out of the later rounds, keeping the others', async () => {
    const a = await RawLevelPeer.open();
    const b = await RawLevelPeer.open();
    try {
      let bRounds = 0;
      const spec: CaseSpec = {
        id: 'T', workload: 'T', title: 'test', unit: 'ops', shape: { kind: 'closed', concurrency: 2 },
        operation(peer) {
          if (peer === b && ++bRounds > 1) throw new Error('peer b is gone');
          return async () => {
            await peer.get('x');
            return 1;
          };
        },
      };
      const s = { ...QUICK, measureMs: 150, warmupMs: 0 };
      const result = await measureCaseInRounds([{ name: 'a', peer: a }, { name: 'b', peer: b }], spec, s, 3);
      expect(result.get('b')).toBeInstanceOf(Error);
      expect((result.get('b') as Error).message).toBe('peer b is gone');
      const ma = result.get('a');
      expect(ma && !(ma instanceof Error) && ma.ops > 0).toBe(true);
      expect(bRounds).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
