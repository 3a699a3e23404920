import { describe, expect, it } from 'vitest';
import { after, chunkKey, KIND, MAX_REV, positionOf, readPosition, readUint64, recordKey, revisionPrefix, uint64 } from '../../../client/revisions/key-layout';
import { timestampOf, timeUuidOf } from '../../../client/revisions/time-uuid';
import { random } from '../../suites/revisions-context';

describe('revisions key layout', () => {
  it('sorts positions unsigned bytewise by rev descending, then tid descending by (timestamp, clock sequence, node)', () => {
    const next = random(7);
    const samples = Array.from({ length: 500 }, () => {
      const rev = [0, 1, 255, 256, 2 ** 32, MAX_REV][Math.floor(next() * 6)];
      const ms = Math.floor(next() * 4) * 400_000 + Date.UTC(2020, 0, 1);
      const node = Buffer.from([Math.floor(next() * 256), 0, 0, 0, 0, Math.floor(next() * 2)]);
      const tid = timeUuidOf(ms, Math.floor(next() * 4), node, Math.floor(next() * 3));
      return { rev, tid, clockSeq: tid.slice(19, 23), node: tid.slice(24) };
    });
    const byKey = [...samples].sort((a, b) => Buffer.compare(positionOf(a.rev, a.tid), positionOf(b.rev, b.tid)));
    const byModel = [...samples].sort((a, b) => {
      if (a.rev !== b.rev) return b.rev - a.rev;
      const [ta, tb] = [timestampOf(a.tid), timestampOf(b.tid)];
      if (ta !== tb) return ta < tb ? 1 : -1;
      if (a.clockSeq !== b.clockSeq) return a.clockSeq < b.clockSeq ? 1 : -1;
      return a.node < b.node ? 1 : a.node > b.node ? -1 : 0;
    });
    expect(byKey.map((s) => `${s.rev}/${s.tid}`)).toEqual(byModel.map((s) => `${s.rev}/${s.tid}`));
  });

  it('reads back the rev and tid of a key', () => {
    const tid = timeUuidOf(Date.UTC(2024, 5, 1), 0x2a5, Buffer.from('0123456789ab', 'hex'), 17);
    for (const rev of [0, 1, 123_456_789, MAX_REV]) {
      const key = recordKey(KIND.RENDER, positionOf(rev, tid));
      expect(key.length).toBe(25);
      expect(readPosition(key, 1)).toEqual({ rev, tid });
      expect(key.subarray(0, 9).equals(revisionPrefix(KIND.RENDER, rev))).toBe(true);
    }
    const chunk = chunkKey(KIND.CHUNK, positionOf(5, tid), Buffer.alloc(8, 7), 3);
    expect([chunk.length, chunk[0], chunk.readUInt32BE(33)]).toEqual([37, KIND.CHUNK, 3]);
  });

  it('writes 64-bit big-endian integers up to 2^53 − 1', () => {
    for (const n of [0, 1, 2 ** 32 - 1, 2 ** 32, MAX_REV]) expect(readUint64(uint64(n), 0)).toBe(n);
    expect(uint64(258).toString('hex')).toBe('0000000000000102');
  });

  it('finds the least key after every key with a prefix', () => {
    expect(after(Buffer.from([1, 2, 3])).toString('hex')).toBe('010204');
    expect(after(Buffer.from([1, 0xff, 0xff])).toString('hex')).toBe('02');
    expect(after(Buffer.from([0xff])).length).toBe(0);
  });
});
