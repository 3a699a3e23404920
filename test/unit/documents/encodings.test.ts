/**
 * The document store's encodings: canonical JSON, rev ids, leaf keys (the winner sorts last), leaf
 * values, heads, change records, feed sequences, the feed layout and the change clock.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, MAX_VALUE_LENGTH, partitionOf } from '../../../client';
import { canonicalBody, canonicalJson } from '../../../client/documents/canonical-json';
import { ChangeClock } from '../../../client/documents/change-clock';
import { decodeChange, encodeChange } from '../../../client/documents/feed-records';
import { FeedLayout, feedFamilies } from '../../../client/documents/feed-layout';
import { decodeHead, encodeHead } from '../../../client/documents/head-codec';
import { changeKey, leafKey, parseLeafKey, seqOfChangeKey } from '../../../client/documents/key-layout';
import { decodeLeafValue, encodeLeafValue, leafValueLength } from '../../../client/documents/leaf-codec';
import { editHash, parseRev } from '../../../client/documents/rev-id';
import { decodeSequence, encodeSequence } from '../../../client/documents/sequence-codec';

describe('canonical JSON', () => {
  it('sorts members, drops undefined members, writes undefined items as null and calls toJSON', () => {
    expect(canonicalJson({ b: 1, a: [undefined, { d: 'x', c: undefined }], e: new Date(0), é: 1.5e-7, A: true }, 'v')).toBe(
      '{"A":true,"a":[null,{"d":"x"}],"b":1,"e":"1970-01-01T00:00:00.000Z","é":1.5e-7}',
    );
  });

  it('refuses what JSON cannot hold, and bodies nested too deep', () => {
    expect(() => canonicalJson({ n: 1n }, 'body')).toThrow(new InvalidArgumentError('body: n is a bigint, which JSON cannot hold'));
    expect(() => canonicalJson([Infinity], 'body')).toThrow('body: [0] is Infinity; JSON numbers must be finite');
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = { x: deep };
    expect(() => canonicalBody(deep, 'body')).toThrow(/^body nests deeper than 128 levels at x(\.x)+$/);
    expect(() => canonicalBody(null, 'body')).toThrow('body must be a JSON object, got null');
  });
});

describe('rev ids', () => {
  it('hashes (parent, deleted, canonical body) into 32 hex digits', () => {
    const h = editHash(null, false, '{"a":1}');
    expect(h).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set([h, editHash('1-x', false, '{"a":1}'), editHash(null, true, '{"a":1}'), editHash(null, false, '{"a":2}')]).size).toBe(4);
    expect(editHash(null, false, '{"a":1}')).toBe(h);
  });

  it('parses "<pos>-<hash>" and names the field of a bad one', () => {
    expect(parseRev('12-abcDEF09', 'rev')).toEqual({ pos: 12, hash: 'abcDEF09' });
    expect(() => parseRev('0-abc', 'rev')).toThrow('rev "0-abc" is not a revision id');
    expect(() => parseRev(`1-${'a'.repeat(129)}`, 'rev')).toThrow('rev is a revision hash of 129 characters; the maximum is 128');
  });
});

describe('document and feed keys', () => {
  it('sorts leaf keys by (not deleted, pos, hash), so the winner is the last key', () => {
    const keys = [leafKey(true, 99, 'zz'), leafKey(false, 1, 'b'), leafKey(false, 2, 'a'), leafKey(false, 2, 'ab'), leafKey(false, 256, '0'), leafKey(false, 65536, '0')];
    const sorted = [...keys].sort(Buffer.compare);
    expect(sorted).toEqual(keys);
    expect(parseLeafKey(leafKey(true, 65536, 'abc'))).toEqual({ deleted: true, pos: 65536, hash: 'abc' });
  });

  it('round-trips leaf values, change records and change keys', () => {
    const value = encodeLeafValue(['a', 'bc'], '{"é":1}');
    expect(value.length).toBe(leafValueLength(['a', 'bc'], '{"é":1}'));
    expect(decodeLeafValue(value)).toEqual({ ancestors: ['a', 'bc'], body: '{"é":1}' });
    expect(() => decodeLeafValue(Buffer.of(2, 0, 0))).toThrow(InvalidArgumentError);
    const change = { id: 'dé/1', rev: '3-abc', deleted: true, time: 1_767_225_600_000_123 };
    expect(decodeChange(encodeChange(change))).toEqual(change);
    expect(seqOfChangeKey(changeKey(2n ** 63n + 5n))).toBe(2n ** 63n + 5n);
    expect(Buffer.compare(changeKey(255n), changeKey(256n))).toBeLessThan(0);
  });
});

describe('document heads', () => {
  it("keep a live winner's body, and leave it out for a deleted winner or one that would not fit in a value", () => {
    const live = { winner: { deleted: false, pos: 7, hash: 'abc' }, leafCount: 3, body: '{"é":1}' };
    expect(decodeHead(encodeHead(live))).toEqual(live);
    const deleted = { winner: { deleted: true, pos: 2, hash: 'x' }, leafCount: 1, body: '{}' };
    expect(decodeHead(encodeHead(deleted))).toEqual({ ...deleted, body: null });
    const nameOnly = { winner: { deleted: false, pos: 1, hash: 'h'.repeat(128) }, leafCount: 1, body: null };
    expect(decodeHead(encodeHead(nameOnly))).toEqual(nameOnly);
    // The largest body that fits beside the name, and one byte more.
    const fits = 'b'.repeat(MAX_VALUE_LENGTH - 11 - 3);
    expect(encodeHead({ ...live, body: fits }).length).toBe(MAX_VALUE_LENGTH);
    expect(decodeHead(encodeHead({ ...live, body: fits })).body).toBe(fits);
    expect(decodeHead(encodeHead({ ...live, body: `${fits}b` }))).toEqual({ ...live, body: null });
    expect(() => decodeHead(Buffer.of(3, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0x61))).toThrow(new InvalidArgumentError('not a document head (11 bytes)'));
    expect(() => decodeHead(Buffer.of(2, 0, 0, 0, 0, 1, 0, 0, 0, 1, 9, 0x61))).toThrow(new InvalidArgumentError('not a document head (12 bytes, hash of 9)'));
  });
});

describe('feed sequences', () => {
  it('round-trip, and refuse a sequence of another partition count or a tampered one', () => {
    const p = { fingerprint: 0xdeadbeef, positions: [0n, 1n, 300n, 2n ** 60n] };
    const text = encodeSequence(p);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeSequence(text, 4, 'since')).toEqual(p);
    expect(() => decodeSequence(text, 5, 'since')).toThrow('since is not a sequence of this changes feed: it has 4 partitions, the table 5');
    const tampered = Buffer.from(text, 'base64url');
    tampered[6] ^= 1;
    expect(() => decodeSequence(tampered.toString('base64url'), 4, 'since')).toThrow('since is not a sequence of this changes feed: malformed');
    expect(() => decodeSequence('', 4, 'since')).toThrow('since is not a sequence of this changes feed: expected a non-empty string, got an empty string');
  });
});

describe('feed layout', () => {
  it('picks one feed family per partition, landing in that partition, the same every time', () => {
    for (const n of [1, 4, 7, 64, 1024]) {
      const names = feedFamilies(n);
      expect(names).toHaveLength(n);
      names.forEach((name, p) => expect(partitionOf(n, name)).toBe(p));
    }
    // Golden: the layout of a table is part of its stored format.
    expect(feedFamilies(4)).toEqual(['c/6', 'c/1', 'c/0', 'c/2']);
    expect(feedFamilies(8)).toEqual(['c/6', 'c/39', 'c/18', 'c/1', 'c/4', 'c/0', 'c/14', 'c/2']);
    expect(feedFamilies(1)).toEqual(['c/0']);
    const layout = new FeedLayout(8);
    expect(partitionOf(8, layout.feedOf('doc'))).toBe(partitionOf(8, 'd/doc'));
  });
});

describe('change clock', () => {
  it('counts changes within a millisecond and never goes back', () => {
    let now = 5;
    const clock = new ChangeClock(() => now);
    const times = [clock.now(), clock.now()];
    now = 4;
    times.push(clock.now());
    now = 7;
    times.push(clock.now());
    expect(times).toEqual([5000, 5001, 5002, 7000]);
  });
});
