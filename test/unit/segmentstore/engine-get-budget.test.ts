/**
 * The byte budget of Get answers (GetResponse in segmentstore.proto): a Get answers the entries of its
 * first keys that fit in 32 MiB of keys and values, always at least one entry per answer, and the Gets
 * of one Execute share one budget, so that an answer never passes the 64 MiB message limit.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_GET_ANSWER_BYTES, MAX_VALUE_LENGTH } from '../../../proto/limits';
import { execute } from '../../../segmentstore/service/segment-store-service';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import { PageCaps } from '../../../segmentstore/storage/read/page-caps';
import { tempDir } from '../../harness/process';

describe('Get answers under the byte budget', () => {
  const dir = tempDir('kvt-get-budget-');
  let engine: SegmentEngine;
  const key = (i: number) => Buffer.from(`k${String(i).padStart(3, '0')}`);
  const perEntry = MAX_VALUE_LENGTH + 4;
  const fit = Math.floor(MAX_GET_ANSWER_BYTES / perEntry);

  beforeAll(async () => {
    engine = await SegmentEngine.open(path.join(dir.path, 'db'), { expirySweepIntervalMs: 0 });
    // Keys 0-79 in two segments, each with a 1 MiB value of its own byte.
    for (const seg of ['1', '2']) {
      await engine.createSegment(seg);
      for (let i = 0; i < 80; i++) await engine.update({ segmentId: seg, modifications: [{ type: 'PUT', key: key(i), value: Buffer.alloc(MAX_VALUE_LENGTH, i) }] });
    }
  }, 120_000);
  afterAll(async () => {
    await engine?.close();
    dir.dispose();
  });

  it('answers the first keys that fit, in order, and small answers whole', async () => {
    const all = await engine.get({ segmentId: '1', keys: Array.from({ length: 80 }, (_, i) => ({ key: key(i) })) });
    expect(all.entries).toHaveLength(fit);
    expect(all.entries.map((e) => [e.found, e.value[0]])).toEqual(Array.from({ length: fit }, (_, i) => [true, i]));
    const few = await engine.get({ segmentId: '1', keys: [{ key: key(3) }, { key: Buffer.from('absent') }] });
    expect(few.entries.map((e) => e.found)).toEqual([true, false]);
  });

  it('always answers the first entry, and nothing more once the budget is spent', async () => {
    const tiny = new PageCaps(Infinity, 10);
    expect((await engine.get({ segmentId: '1', keys: [{ key: key(1) }, { key: key(2) }] }, tiny)).entries).toHaveLength(1);
    expect((await engine.get({ segmentId: '1', keys: [{ key: key(3) }] }, tiny)).entries).toHaveLength(0);
  });

  it('shares one budget between the Gets of one Execute', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => ({ family: '', key: key(i) }));
    const res = await execute(engine, { requests: [{ get: { segmentId: '1', keys } }, { get: { segmentId: '2', keys } }] });
    const counts = res.responses.map((r) => r.get?.entries.length ?? -1);
    expect(counts[0] + counts[1]).toBe(fit);
    expect(Math.min(...counts)).toBeGreaterThan(0);
  });
});
