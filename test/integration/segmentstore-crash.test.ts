/**
 * Durability of a real segment-store process: SIGKILL while 16 writers stream acknowledged updates
 * and atomic batches, then restart on the same data directory and check every acknowledgement.
 * Also: one clear line for a second process on the same data dir, and a graceful SIGTERM.
 */
import { describe, expect, it } from 'vitest';
import { spawnKvt, startSegmentStore, tempDir } from '../harness/process';
import { grpcAdapter, SegmentStoreAdapter } from '../suites/segment-store-adapter';

const SEGMENTS = ['11', '12', '13', '14'];
const WRITERS = 16;
const WRITE_MS = 2_500;
const MAX_OPS_PER_WRITER = 20_000;

interface Written {
  segmentId: string;
  family: string;
  keys: string[];
  acked: boolean;
  sequences: string[];
}

async function writer(store: SegmentStoreAdapter, w: number, until: number, log: Written[]): Promise<void> {
  for (let n = 0; n < MAX_OPS_PER_WRITER && Date.now() < until; n++) {
    const segmentId = SEGMENTS[(w + n) % SEGMENTS.length];
    const batch = n % 2 === 1;
    const family = batch ? `batch-${w}` : '';
    const keys = batch ? [0, 1, 2, 3].map((j) => `w${w}-${n}-${j}`) : [`w${w}-${n}`];
    const entry: Written = { segmentId, family, keys, acked: false, sequences: [] };
    log.push(entry);
    try {
      const res = await store.update({ segmentId, modifications: keys.map((k) => ({ type: 'INSERT' as const, family, key: Buffer.from(k), value: Buffer.from(`value of ${k}`) })) });
      entry.acked = true;
      entry.sequences = res.sequences;
    } catch {
      return; // the store was killed
    }
  }
}

describe('kvt segmentstore crash safety', () => {
  it('keeps every acknowledged update, never shows part of a batch, and keeps versions increasing after SIGKILL', async () => {
    using dir = tempDir('kvt-ss-crash-');
    const first = await startSegmentStore(dir.path);
    const store = grpcAdapter(first.address);
    for (const id of SEGMENTS) await store.createSegment(id);
    const log: Written[] = [];
    const until = Date.now() + WRITE_MS;
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(store, w, until + 5_000, log));
    await new Promise((r) => setTimeout(r, WRITE_MS));
    expect(await first.kill('SIGKILL')).toBeNull();
    await Promise.all(writers);
    store.close();

    await using second = await startSegmentStore(dir.path);
    const after = grpcAdapter(second.address);
    try {
      const acked = log.filter((e) => e.acked);
      expect(acked.length).toBeGreaterThan(WRITERS);
      // The kill hit writes in flight: some were never acknowledged.
      expect(log.some((e) => !e.acked)).toBe(true);
      const maxSeq = new Map<string, bigint>();
      // One Execute per 200 logged writes: a Get sub-request each, answered in order.
      for (let from = 0; from < log.length; from += 200) {
        const chunk = log.slice(from, from + 200);
        const res = await after.execute({ requests: chunk.map((e) => ({ get: { segmentId: e.segmentId, keys: e.keys.map((k) => ({ family: e.family, key: Buffer.from(k) })) } })) });
        chunk.forEach((e, n) => {
          const entries = res.responses[n].get!.entries;
          const found = entries.filter((x) => x.found).length;
          expect([0, e.keys.length], `batch ${e.keys[0]} partially visible`).toContain(found);
          if (!e.acked) return;
          expect(found, `acknowledged ${e.keys[0]} lost`).toBe(e.keys.length);
          entries.forEach((x, j) => {
            expect(Buffer.from(x.value).toString()).toBe(`value of ${e.keys[j]}`);
            expect(x.sequence).toBe(e.sequences[j]);
            const seq = BigInt(x.sequence);
            if (seq > (maxSeq.get(e.segmentId) ?? 0n)) maxSeq.set(e.segmentId, seq);
          });
        });
      }
      for (const id of SEGMENTS) {
        const res = await after.update({ segmentId: id, modifications: [{ family: '', key: Buffer.from('after-restart'), value: Buffer.from('x') }] });
        expect(BigInt(res.sequences[0])).toBeGreaterThan(maxSeq.get(id) ?? 0n);
      }
    } finally {
      after.close();
    }
  });

  it('fails fast with one clear line when another store holds the data directory', async () => {
    using dir = tempDir('kvt-ss-lock-');
    await using first = await startSegmentStore(dir.path);
    const second = spawnKvt(['segmentstore', '--port', '0', '--data-dir', dir.path]);
    expect(await second.waitForExit()).toBe(1);
    expect(second.stderr.join('')).toBe(`kvt segmentstore: data directory ${dir.path} is in use by another segment store\n`);
    expect(first.running).toBe(true);
  });

  it('stops gracefully on SIGTERM with exit code 0', async () => {
    using dir = tempDir('kvt-ss-term-');
    const proc = await startSegmentStore(dir.path);
    const store = grpcAdapter(proc.address);
    await store.createSegment('1');
    const pending = store.update({ segmentId: '1', modifications: [{ key: Buffer.from('k'), value: Buffer.from('v') }] });
    await pending;
    store.close();
    expect(await proc.stop()).toBe(0);
    expect(proc.logs.map((l) => l.msg)).toContain('segment store stopped');
  });
});
