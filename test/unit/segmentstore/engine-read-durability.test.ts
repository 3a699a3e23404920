/** Reads never see a write before it is durable, even though conditions already do. */
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../harness/process';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';

describe('SegmentEngine.get', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('answers with a write still in the group commit only after that write is acknowledged', async () => {
    const dir = tempDir();
    cleanup.push(dir.dispose);
    const engine = await SegmentEngine.open(path.join(dir.path, 'db'), { expirySweepIntervalMs: 0 });
    cleanup.push(() => engine.close());
    await engine.createSegment('1');
    const order: string[] = [];
    for (let round = 0; round < 20; round++) {
      const value = Buffer.from(`v${round}`);
      const write = engine.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from('k'), value }] }).then((r) => {
        order.push(`ack ${round}`);
        return r;
      });
      const read = engine.get({ segmentId: '1', keys: [{ family: 'f', key: Buffer.from('k') }] }).then((r) => {
        order.push(`read ${round}`);
        return r;
      });
      const [ack, got] = await Promise.all([write, read]);
      expect(got.entries[0]).toMatchObject({ found: true, sequence: ack.sequences[0] });
      expect(got.entries[0].value.toString()).toBe(`v${round}`);
    }
    for (let round = 0; round < 20; round++) expect(order.indexOf(`ack ${round}`)).toBeLessThan(order.indexOf(`read ${round}`));
  });
});
