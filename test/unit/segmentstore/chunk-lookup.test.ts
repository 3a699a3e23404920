/**
 * Point lookups in chunk records without decoding them (chunks/chunk-lookup.ts) answer as a search of
 * the decoded entries would, walking a record once or bisecting its offsets when asked again; and the
 * sole-chunk mark of a record's count (chunk-codec.ts) changes nothing of its entries.
 */
import { describe, expect, it } from 'vitest';
import { ChunkEntry, chunkCount, decodeChunk, encodeChunk, isSoleChunk, markSole, searchChunk } from '../../../segmentstore/storage/chunks/chunk-codec';
import { ABSENT_BEYOND, ABSENT_WITHIN, ChunkLookups, findIn, seekEntry } from '../../../segmentstore/storage/chunks/chunk-lookup';
import { mulberry32 } from '../../harness/oracle';

function randomRecord(rand: () => number, count: number): ChunkEntry[] {
  const keys = new Set<string>();
  while (keys.size < count) keys.add(Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 6) }, () => 97 + Math.floor(rand() * 4))).toString('latin1'));
  return [...keys].sort().map((k, i) => ({ key: Buffer.from(k, 'latin1'), sequence: i + 1, expiresAt: i % 5 === 0 ? 1_000 : 0, value: Buffer.from(`v${i}`) }));
}

describe('chunk lookups', () => {
  it('find what a search of the decoded entries finds, live or expired, in both ways of looking', () => {
    const rand = mulberry32(11);
    for (let round = 0; round < 200; round++) {
      const entries = randomRecord(rand, Math.floor(rand() * 40));
      const record = encodeChunk(entries);
      if (rand() < 0.5) markSole(record, true);
      const lookups = new ChunkLookups();
      for (let probe = 0; probe < 30; probe++) {
        const key =
          rand() < 0.6 && entries.length > 0 ? entries[Math.floor(rand() * entries.length)].key : Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 6) }, () => 96 + Math.floor(rand() * 6)));
        const now = rand() < 0.5 ? 500 : 2_000;
        const at = searchChunk(decodeChunk(record), key);
        const expected = at >= 0 && (entries[at].expiresAt === 0 || entries[at].expiresAt > now) ? { value: entries[at].value, sequence: entries[at].sequence } : undefined;
        expect(findIn(record, key, now)).toEqual(expected);
        expect(lookups.find(record, key, now)).toEqual(expected);
        const seek = seekEntry(record, key);
        if (at >= 0) expect(seek).toBeGreaterThanOrEqual(0);
        else expect(seek).toBe(-at - 1 < entries.length ? ABSENT_WITHIN : ABSENT_BEYOND);
        expect(lookups.seek(record, key)).toBe(seek);
      }
    }
  });

  it('step over values whose lengths take each byte of the header, walking and bisecting', () => {
    // A walk steps over each value by the u32 length in its entry's header: lengths that use each of
    // its low three bytes (MAX_VALUE_LENGTH, just under 2^20, leaves the top one 0).
    const lengths = [0, 1, 255, 256, 65_535, 65_536, 300_000, 1_040_384];
    for (const count of [lengths.length, 40, 300]) {
      const entries = Array.from({ length: count }, (_, i) => ({
        key: Buffer.from(`k${String(i).padStart(4, '0')}`),
        sequence: i + 1,
        expiresAt: 0,
        value: Buffer.alloc(i < lengths.length ? lengths[i] : i % 7, i % 251),
      }));
      const record = encodeChunk(entries);
      // A record's first lookup in a ChunkLookups walks it, the later ones bisect its offsets.
      const lookups = new ChunkLookups();
      for (const i of [0, 1, 5, 6, 7, count - 1]) {
        // Buffer.equals: vitest's deep equality walks a megabyte element by element.
        for (const found of [findIn(record, entries[i].key, 0), lookups.find(record, entries[i].key, 0)]) {
          expect([found?.value.equals(entries[i].value), found?.sequence]).toEqual([true, i + 1]);
        }
      }
      expect(seekEntry(record, Buffer.from('k0000a'))).toBe(ABSENT_WITHIN);
      expect(seekEntry(record, Buffer.from('l'))).toBe(ABSENT_BEYOND);
      expect(decodeChunk(record).map((e) => e.value.length)).toEqual(entries.map((e) => e.value.length));
    }
  });

  it('find nothing in no record or an empty one', () => {
    expect(findIn(null, Buffer.from('a'), 0)).toBeUndefined();
    expect(seekEntry(encodeChunk([]), Buffer.from('a'))).toBe(ABSENT_BEYOND);
    expect(new ChunkLookups().find(null, Buffer.from('a'), 0)).toBeUndefined();
  });
});

describe('the sole-chunk mark', () => {
  it('is the top bit of the count: set and cleared in place, the entries unchanged', () => {
    const entries = randomRecord(mulberry32(3), 20);
    const record = encodeChunk(entries);
    expect(isSoleChunk(record)).toBe(false);
    markSole(record, true);
    expect(isSoleChunk(record)).toBe(true);
    expect(chunkCount(record)).toBe(20);
    expect(decodeChunk(record).map((e) => e.key.toString('latin1'))).toEqual(entries.map((e) => e.key.toString('latin1')));
    markSole(record, false);
    expect(isSoleChunk(record)).toBe(false);
    expect(record.equals(encodeChunk(entries))).toBe(true);
  });
});
