import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../harness/oracle';
import { encodeIterateResponse } from '../../../segmentstore/service/wire-codec';
import { BytePool, PageCaps } from '../../../segmentstore/storage/read/page-caps';
import { ObjectPageSink } from '../../../segmentstore/storage/read/page-sink';
import { WirePageSink } from '../../../segmentstore/service/wire-page-sink';
import { kvtPackage } from '../../../proto/load';

describe('family page sinks', () => {
  it('write the very bytes encodeIterateResponse makes of the object page, under the same caps', () => {
    const random = mulberry32(5);
    for (let round = 0; round < 300; round++) {
      // Entries spread over a few records, as a page spans chunks.
      const records = Array.from({ length: 1 + Math.floor(random() * 3) }, () => Buffer.from(Array.from({ length: 400 }, () => Math.floor(random() * 256))));
      const maxItems = 1 + Math.floor(random() * 12);
      const pageBytes = 1 + Math.floor(random() * 600);
      const includeValues = random() < 0.7;
      const objects = new ObjectPageSink(maxItems, pageBytes, includeValues);
      const wire = new WirePageSink(maxItems, pageBytes, includeValues);
      for (let i = 0; i < 15; i++) {
        const record = records[Math.floor(random() * records.length)];
        const ks = Math.floor(random() * 100);
        const ke = ks + Math.floor(random() * 40); // empty keys too
        const vs = ke + Math.floor(random() * 5);
        const ve = vs + (random() < 0.2 ? 0 : Math.floor(random() * 200));
        const sequence = [0, 1, 9, 10, 12345, 2 ** 40, Number.MAX_SAFE_INTEGER][Math.floor(random() * 7)];
        const a = objects.add(record, ks, ke, vs, ve, sequence);
        expect(wire.add(record, ks, ke, vs, ve, sequence)).toBe(a);
        if (!a) break;
      }
      const done = random() < 0.5;
      const page = objects.finish(done);
      expect(page.items.length).toBeGreaterThan(0); // a page always takes its first entry
      const bytes = wire.finish(done);
      expect(bytes.equals(encodeIterateResponse(page))).toBe(true);
      expect(kvtPackage().SegmentStore.service.Iterate.responseDeserialize(bytes)).toStrictEqual(kvtPackage().SegmentStore.service.Iterate.responseDeserialize(encodeIterateResponse(page)));
    }
  });

  it('write an empty page as just its done flag', () => {
    expect(new WirePageSink(10, 100, true).finish(true)).toEqual(Buffer.from([0x10, 0x01]));
    expect(new WirePageSink(10, 100, true).finish(false)).toEqual(Buffer.alloc(0));
  });
});

describe('PageCaps drawing on a shared BytePool', () => {
  it('admits within its own cap and what the pool has left, always its first item, and reports what it drew', () => {
    const pool = new BytePool(100);
    const a = new PageCaps(Infinity, 80, pool);
    const b = new PageCaps(Infinity, 80, pool);
    expect([a.admit(30), a.admit(30), a.admit(30)]).toEqual([true, true, false]); // its own cap: 60 + 30 > 80
    expect(pool.used).toBe(60);
    // b's first item goes in even past the pool; later ones only within what is left.
    expect([b.admit(50), b.admit(1)]).toEqual([true, false]);
    expect(pool.used).toBe(110);
    expect([a.drawn, b.drawn]).toEqual([60, 50]);
    // Without a pool nothing is drawn, and only the caps of the page apply.
    const alone = new PageCaps(2, 1_000);
    expect([alone.admit(10), alone.admit(10), alone.admit(10), alone.drawn]).toEqual([true, true, false, 0]);
  });
});
