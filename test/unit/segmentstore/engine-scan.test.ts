/** SegmentEngine.scan: every entry of a segment across families, paged by position. */
import { describe, expect, it } from 'vitest';
import { scratchEngines } from '../../harness/scratch-engines';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';

describe('SegmentEngine.scan', () => {
  const scratch = scratchEngines();

  async function engineWith(now: () => number = () => 1_000): Promise<SegmentEngine> {
    const engine = await scratch.open(undefined, { clock: now });
    await engine.createSegment('3');
    await engine.createSegment('4');
    return engine;
  }

  const put = (family: string, key: string, value = `v-${key}`, ttlMs = '') => ({ type: 'PUT' as const, family, key: Buffer.from(key), value: Buffer.from(value), ttlMs });

  it('lists every family and the family-less keys, page by page, without repeats or gaps', async () => {
    const engine = await engineWith();
    for (const family of ['b', 'a', 'c']) {
      await engine.update({ segmentId: '3', modifications: ['k2', 'k1', 'k3'].map((k) => put(family, k)) });
    }
    await engine.update({ segmentId: '3', modifications: [put('', 'loose')] });
    await engine.update({ segmentId: '4', modifications: [put('a', 'other-segment')] });
    const seen: string[] = [];
    let after: Buffer = Buffer.alloc(0);
    let pages = 0;
    for (;;) {
      const page = await engine.scan({ segmentId: '3', includeValues: true, maxItems: 4, after });
      pages++;
      for (const item of page.items) {
        expect(item.value.toString()).toBe(`v-${item.key.toString()}`);
        seen.push(`${item.family}/${item.key.toString()}`);
      }
      after = Buffer.from(page.position);
      if (page.done) break;
      expect(page.items).toHaveLength(4);
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(['a/k1', 'a/k2', 'a/k3', 'b/k1', 'b/k2', 'b/k3', 'c/k1', 'c/k2', 'c/k3', '/loose']);
  });

  it("counts each item's family against the 2 MiB page cap", async () => {
    const engine = await engineWith();
    // 2,000 one-byte keys in a family of 2,000 bytes: ~4 MB of scan items, though keys and values are tiny.
    const family = 'f'.repeat(2_000);
    for (let i = 0; i < 2_000; i += 250) {
      await engine.update({ segmentId: '3', modifications: Array.from({ length: 250 }, (_, j) => put(family, `k${String(i + j).padStart(4, '0')}`, '')) });
    }
    const page = await engine.scan({ segmentId: '3', includeValues: true, maxItems: 10_000, after: Buffer.alloc(0) });
    const bytes = page.items.reduce((n, item) => n + item.family.length + item.key.length + item.value.length, 0);
    expect(page.done).toBe(false);
    expect(bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(page.items.length).toBeGreaterThan(900);
  });

  it('skips expired and removed entries and leaves values out when not asked for', async () => {
    let now = 1_000;
    const engine = await engineWith(() => now);
    await engine.update({ segmentId: '3', modifications: [put('f', 'short', 'x', '10'), put('f', 'kept'), put('f', 'gone')] });
    await engine.update({ segmentId: '3', modifications: [{ type: 'REMOVE', family: 'f', key: Buffer.from('gone') }] });
    now += 11;
    const page = await engine.scan({ segmentId: '3', includeValues: false, maxItems: 10 });
    expect(page.done).toBe(true);
    expect(page.items.map((i) => [i.family, i.key.toString(), i.value.length])).toEqual([['f', 'kept', 0]]);
  });

  it('rejects a page size over the limit and an unknown segment', async () => {
    const engine = await engineWith();
    await expect(engine.scan({ segmentId: '3', maxItems: 10_001 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'maxItems is 10001; the maximum is 10000',
    });
    await expect(engine.scan({ segmentId: '99' })).rejects.toMatchObject({ code: 'SEGMENT_NOT_FOUND' });
  });
});
