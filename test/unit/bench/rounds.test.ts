import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { measureCaseInRounds, roundSettings } from '../../../bench/measure';
import { Peer } from '../../../bench/peers/peer';
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
    // Every round draws its own keys (before, each replayed the first round's).
    expect(new Set([0, 1, 2, 3, 4].map((r) => roundSettings(FULL, 5, r).seed)).size).toBe(5);
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
        id: 'T',
        workload: 'T',
        title: 'test puts',
        unit: 'ops',
        shape: { kind: 'closed', concurrency: 4 },
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
      const result = await measureCaseInRounds(
        [
          { name: 'a', peer: a },
          { name: 'b', peer: b },
        ],
        spec,
        s,
        4,
      );
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
        id: 'T',
        workload: 'T',
        title: 'test',
        unit: 'ops',
        shape: { kind: 'closed', concurrency: 2 },
        operation(peer) {
          if (peer === b && ++bRounds > 1) throw new Error('peer b is gone');
          return async () => {
            await peer.get('x');
            return 1;
          };
        },
      };
      const s = { ...QUICK, measureMs: 150, warmupMs: 0 };
      const result = await measureCaseInRounds(
        [
          { name: 'a', peer: a },
          { name: 'b', peer: b },
        ],
        spec,
        s,
        3,
      );
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

  it('charges a server the work it defers past its window, to that peer alone, and waits for it before the next peer', async () => {
    // A stand-in server: told "burn" on stdin, it waits 100 ms, then spends 400 ms of CPU, then writes
    // the time it finished (its own clock: this process may read its stdout late on a busy machine).
    // The case's operations themselves cost it nothing, so all its CPU is deferred work, which ends
    // after the round's window closed (the windows are 150 ms).
    const script = "process.stdin.on('data', () => setTimeout(() => { const u = process.cpuUsage(); while (process.cpuUsage(u).user < 400_000); process.stdout.write(Date.now() + '\\n'); }, 100));";
    const server = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const burnsDone: number[] = [];
    server.stdout.on('data', (chunk: Buffer) => burnsDone.push(...chunk.toString().trim().split('\n').map(Number)));
    const b = await RawLevelPeer.open();
    try {
      const a = { name: 'etcd-grpc', cpu: { kind: 'pids', pids: () => [server.pid!] } } as unknown as Peer;
      // A second client of the same server (as etcd3 and etcd-grpc share one etcd), which burns nothing.
      const a2 = { name: 'etcd3', cpu: { kind: 'pids', pids: () => [server.pid!] } } as unknown as Peer;
      const roundStarts: { peer: string; at: number }[] = [];
      const spec: CaseSpec = {
        id: 'T',
        workload: 'T',
        title: 'deferred work',
        unit: 'ops',
        shape: { kind: 'closed', concurrency: 2 },
        operation(peer) {
          roundStarts.push({ peer: peer === b ? 'b' : peer === a2 ? 'a2' : 'a', at: Date.now() });
          if (peer === a) server.stdin.write('burn\n');
          return async () => {
            await new Promise((resolve) => setTimeout(resolve, 2));
            return 1;
          };
        },
      };
      // The wait for an idle server is capped (settleMs): on a machine loaded to 13 on 2 cores a burn of
      // 400 ms of CPU outlasted a cap of 5 s and leaked into a2's round. The cap here only bounds a hang.
      const s = { ...QUICK, measureMs: 300, warmupMs: 0, settleMs: 60_000 };
      const result = await measureCaseInRounds(
        [
          { name: 'a', peer: a },
          { name: 'b', peer: b },
          { name: 'a2', peer: a2 },
        ],
        spec,
        s,
        2,
      );
      const m = result.get('a');
      if (!m || m instanceof Error) throw new Error(`no measurement: ${String(m)}`);
      // Two burns of 400 ms, both after their windows: charged (a window-only meter read ~0).
      expect(m.cpuSeconds).toBeGreaterThanOrEqual(0.7);
      // Divided by every operation completed, those after the windows' ends too: at most per window op.
      expect(m.cpuPerOp).toBeGreaterThan(0);
      expect(m.cpuPerOp!).toBeLessThanOrEqual(m.cpuSeconds! / m.ops);
      // The other client of that server is not charged a's burns (a meter over the whole case was).
      const m2 = result.get('a2');
      if (!m2 || m2 instanceof Error) throw new Error(`no measurement: ${String(m2)}`);
      expect(m2.cpuSeconds).toBeLessThan(0.2);
      // b's round (the next after a's first) began only once a's first burn was over.
      expect(burnsDone.length).toBe(2);
      const bAfterA = roundStarts.find((r, i) => r.peer === 'b' && roundStarts[i - 1]?.peer === 'a');
      expect(bAfterA!.at).toBeGreaterThanOrEqual(burnsDone[0]);
    } finally {
      server.kill();
      await once(server, 'exit');
      await b.close();
    }
  }, 180_000);
});
