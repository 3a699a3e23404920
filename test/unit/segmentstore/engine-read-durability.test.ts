/**
 * Reads never see a write before it is durable; conditions are checked against staged writes, but a
 * failed one is answered only once they are durable; queued batches share one write.
 */
import { describe, expect, it } from 'vitest';
import { failNextLogWrite } from '../../harness/leveldb-faults';
import { scratchEngines } from '../../harness/scratch-engines';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';

/**
 * Twenty rounds of a write of family `f` key `k` and a read started in the same turn: `check` gets the
 * write's acknowledgement and what the read answered, and every read must answer after its write.
 */
async function readsAfterAcks<T>(engine: SegmentEngine, read: () => Promise<T>, check: (ack: { sequences: string[] }, got: T, round: number) => void): Promise<void> {
  await engine.createSegment('1');
  const order: string[] = [];
  for (let round = 0; round < 20; round++) {
    const value = Buffer.from(`v${round}`);
    const write = engine.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from('k'), value }] }).then((r) => {
      order.push(`ack ${round}`);
      return r;
    });
    const got = read().then((r) => {
      order.push(`read ${round}`);
      return r;
    });
    const [ack, answer] = await Promise.all([write, got]);
    check(ack, answer, round);
  }
  for (let round = 0; round < 20; round++) expect(order.indexOf(`ack ${round}`)).toBeLessThan(order.indexOf(`read ${round}`));
}

const scratch = scratchEngines('kvt-read-durability-');

describe('SegmentEngine.get', () => {
  it('answers with a write still in the group commit only after that write is acknowledged', async () => {
    const engine = await scratch.open();
    await readsAfterAcks(
      engine,
      () => engine.get({ segmentId: '1', keys: [{ family: 'f', key: Buffer.from('k') }] }),
      (ack, got, round) => {
        expect(got.entries[0]).toMatchObject({ found: true, sequence: ack.sequences[0] });
        expect(got.entries[0].value.toString()).toBe(`v${round}`);
      },
    );
  });
});

describe('SegmentEngine.iterate', () => {
  it('answers with a write still in the group commit only after that write is acknowledged', async () => {
    const engine = await scratch.open();
    await readsAfterAcks(
      engine,
      () => engine.iterate({ segmentId: '1', family: 'f', maxItems: 10, includeValues: true }),
      (ack, page, round) => {
        expect(page.items).toHaveLength(1);
        expect(page.items[0]).toMatchObject({ sequence: ack.sequences[0] });
        expect(Buffer.from(page.items[0].value).toString()).toBe(`v${round}`);
      },
    );
  });
});

describe('SegmentEngine.update with a condition that fails on a staged write', () => {
  const key = Buffer.from('k');
  const conditional = (family: string, sequence: string) => ({
    segmentId: '1',
    modifications: [{ family, key, value: Buffer.from('second'), condition: { kind: 'VERSION' as const, segmentId: '1', sequence } }],
  });
  const open = async (): Promise<SegmentEngine> => {
    const engine = await scratch.open();
    await engine.createSegment('1');
    return engine;
  };

  it.each(['f', ''])('answers BAD_KEY_VERSION only after that write is acknowledged (family %j)', async (family) => {
    const engine = await open();
    const first = await engine.update({ segmentId: '1', modifications: [{ family, key, value: Buffer.from('first') }] });
    const order: string[] = [];
    const write = engine.update({ segmentId: '1', modifications: [{ family, key, value: Buffer.from('overwrite') }] }).then(() => order.push('write acknowledged'));
    const refused = engine.update(conditional(family, first.sequences[0])).catch((err: { code?: string }) => order.push(`condition ${err.code}`));
    await Promise.all([write, refused]);
    expect(order).toEqual(['write acknowledged', 'condition BAD_KEY_VERSION']);
  });

  // (In a keyed family whose chunk is in memory the condition is checked at once, while the write is staged.)
  it('answers UNAVAILABLE (nothing applied) when that write fails: the state it saw never was', async () => {
    const engine = await open();
    const family = 'f';
    const first = await engine.update({ segmentId: '1', modifications: [{ family, key, value: Buffer.from('first') }] });
    using _fault = failNextLogWrite('injected write failure');
    const write = engine.update({ segmentId: '1', modifications: [{ family, key, value: Buffer.from('lost') }] });
    const refused = engine.update(conditional(family, first.sequences[0]));
    await expect(write).rejects.toThrow('injected write failure');
    await expect(refused).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'segment store could not write the state this condition was checked against; try again' });
  });
});

describe('SegmentEngine group commit', () => {
  it('writes every batch that queued up during a flush in one synced LevelDB write', async () => {
    const engine = await scratch.open(undefined, { maxFlushOps: 64 });
    await engine.createSegment('1');
    const before = engine.commitStats;
    const writes = Array.from({ length: 600 }, (_, i) => engine.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) }] }));
    const acks = await Promise.all(writes);
    const stats = engine.commitStats;
    // 600 updates make ten batches of at most 64 operations; they reach the disk in far fewer writes.
    expect(stats.flushes - before.flushes).toBeLessThan(Math.ceil(600 / 64));
    expect(stats.ops - before.ops).toBeGreaterThanOrEqual(600);
    const sequences = acks.map((a) => Number(a.sequences[0]));
    expect(new Set(sequences).size).toBe(600);
    const got = await engine.get({ segmentId: '1', keys: [{ family: 'f', key: Buffer.from('k599') }] });
    expect(got.entries[0]).toMatchObject({ found: true, sequence: String(sequences[599]) });
  });
});
