import { describe, expect, it } from 'vitest';
import {
  dataKey,
  decodeExpiryKey,
  decodeMetaKey,
  encodeSegmentId,
  encodeValue,
  expiryKey,
  familyPrefix,
  prefixSuccessor,
  segmentDataPrefix,
  segmentRecordKey,
  segmentSequenceKey,
  userKeyOf,
  valueBytes,
  valueExpiresAt,
  valueSequence,
} from '../../../segmentstore/storage/key-codec';

const prefix = segmentDataPrefix(encodeSegmentId('258'));

describe('key codec', () => {
  it('lays out family keys as d | segmentId(8 BE) | F | famLen(2 BE) | family | key', () => {
    expect(dataKey(prefix, 'ab', Buffer.from([0xff])).toString('hex')).toBe('64' + '0000000000000102' + '46' + '0002' + '6162' + 'ff');
  });

  it('lays out family-less keys as d | segmentId | N | key', () => {
    expect(dataKey(prefix, '', Buffer.from('k')).toString('hex')).toBe('64' + '0000000000000102' + '4e' + '6b');
  });

  it('keeps unsigned bytewise key order within a family and families apart', () => {
    const keys = [[0xff], [0x80], [0x7f], [0x00], [0x7f, 0xff]].map((k) => dataKey(prefix, 'f', Buffer.from(k)));
    const sorted = [...keys].sort(Buffer.compare).map((k) => userKeyOf(k).toString('hex'));
    expect(sorted).toEqual(['00', '7f', '7fff', '80', 'ff']);
    // "a" + key "bz" must not fall inside family "ab"'s range.
    const ab = familyPrefix(prefix, 'ab');
    const other = dataKey(prefix, 'a', Buffer.from('bz'));
    expect(other.subarray(0, ab.length).equals(ab)).toBe(false);
  });

  it('extracts the user key of both layouts, with multi-byte families', () => {
    expect(userKeyOf(dataKey(prefix, 'é', Buffer.from('key'))).toString()).toBe('key');
    expect(userKeyOf(dataKey(prefix, '', Buffer.from('key'))).toString()).toBe('key');
  });

  it('encodes values as sequence, expiresAt, bytes', () => {
    const v = encodeValue(2 ** 40 + 5, 1_700_000_000_000, Buffer.from('hello'));
    expect(valueSequence(v)).toBe(2 ** 40 + 5);
    expect(valueExpiresAt(v)).toBe(1_700_000_000_000);
    expect(valueBytes(v).toString()).toBe('hello');
  });

  it('round-trips metadata and expiry keys', () => {
    const id8 = encodeSegmentId('18446744073709551615');
    expect(decodeMetaKey(segmentRecordKey(id8))).toEqual({ segmentId: '18446744073709551615', kind: 'record' });
    expect(decodeMetaKey(segmentSequenceKey(id8))).toEqual({ segmentId: '18446744073709551615', kind: 'sequence' });
    const k = dataKey(prefix, 'f', Buffer.from('k'));
    const decoded = decodeExpiryKey(expiryKey(123, k));
    expect(decoded.expiresAt).toBe(123);
    expect(decoded.storageKey.equals(k)).toBe(true);
  });

  it('computes prefix successors, none for all-0xff', () => {
    expect(prefixSuccessor(Buffer.from([0x61, 0xff]))!.toString('hex')).toBe('62');
    expect(prefixSuccessor(Buffer.from([0x61, 0x62]))!.toString('hex')).toBe('6163');
    expect(prefixSuccessor(Buffer.from([0xff, 0xff]))).toBeUndefined();
  });
});
