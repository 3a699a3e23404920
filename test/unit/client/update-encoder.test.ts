import { describe, expect, it } from 'vitest';
import { UpdateEncoder, NO_TTL } from '../../../client/internal/update-encoder';
import { MODIFICATION_TYPES } from '../../../proto/enums';
import { checkTtl, DuplicateKeyCheck } from '../../../client/internal/validation';
import { encodeExecuteRequest } from '../../../client/internal/wire-codec';
import { InvalidArgumentError } from '../../../client/errors';
import { Version } from '../../../client/version';
import type { ExecuteRequest, ModificationInput, ModificationType } from '../../../proto/messages';
import { bytes, rng } from '../../harness/random-messages';

const EMPTY = Buffer.alloc(0);
const TYPES = ['PUT', 'INSERT', 'REMOVE', 'REMOVE_RANGE'] as const;

/** What the table used to send: one Modification object per modification. */
function wireModification(type: ModificationType, family: string, key: Uint8Array, value: Uint8Array, version: Version | undefined, ttlMs: string): ModificationInput {
  let condition: ModificationInput['condition'];
  if (version && version.isNotExists) condition = { kind: 'NOT_EXISTS', segmentId: '', sequence: '' };
  else if (version && !version.isNoVersion) condition = { kind: 'VERSION', segmentId: version.segmentId, sequence: version.sequence };
  return { type, family, key, value, condition, ttlMs, rangeFrom: EMPTY, rangeTo: EMPTY, rangePrefix: EMPTY };
}

describe('UpdateEncoder', () => {
  it('encodes exactly the bytes of the equivalent Modification objects', () => {
    const rand = rng(11);
    const families = ['', 'f', 'bf-3-12', 'é-ü', 'y'.repeat(32), 'x'.repeat(200)];
    const versions = [undefined, Version.NO_VERSION, Version.NOT_EXISTS, Version.of('7', '123'), Version.of('18446744073709551615', '9007199254740993')];
    const ttls = [NO_TTL, NO_TTL, '0', '1', '86400000', '123456789012'];
    for (let round = 0; round < 200; round++) {
      const family = families[Math.floor(rand() * families.length)];
      const n = 1 + Math.floor(rand() * 12);
      const encoder = new UpdateEncoder(family, n);
      const objects: ModificationInput[] = [];
      for (let i = 0; i < n; i++) {
        const type = TYPES[Math.floor(rand() * TYPES.length)];
        if (type === 'REMOVE_RANGE') {
          const [from, to, prefix] = [bytes(rand, 6), bytes(rand, 6), bytes(rand, 6)];
          encoder.addRange(from, to, prefix);
          objects.push({ ...wireModification(type, family, EMPTY, EMPTY, undefined, NO_TTL), rangeFrom: from, rangeTo: to, rangePrefix: prefix });
          continue;
        }
        const key = bytes(rand, rand() < 0.1 ? 400 : 20);
        const value = type === 'REMOVE' ? EMPTY : bytes(rand, rand() < 0.1 ? 20_000 : 150);
        const version = type === 'INSERT' ? undefined : versions[Math.floor(rand() * versions.length)];
        const ttl = type === 'REMOVE' ? NO_TTL : ttls[Math.floor(rand() * ttls.length)];
        encoder.add(MODIFICATION_TYPES[type], key, value, version, ttl);
        objects.push(wireModification(type, family, key, value, version, ttl));
      }
      const encoded = encoder.finish();
      expect([...encoded.types]).toEqual(objects.map((m) => MODIFICATION_TYPES[m.type as ModificationType]));
      const ours = encodeExecuteRequest({ requests: [{ update: { segmentId: '42', modifications: encoded } }] });
      // (Plain Uint8Arrays among the bytes: the encoder copies any.)
      const theirs = encodeExecuteRequest({ requests: [{ update: { segmentId: '42', modifications: objects } }] } as ExecuteRequest);
      expect(ours.equals(theirs)).toBe(true);
    }
  });

  it('leaves the ttl field out of a modification that never expires (proto3 default, read as no expiry)', () => {
    expect(checkTtl(undefined)).toBe(NO_TTL);
    const never = new UpdateEncoder('f', 1);
    never.add(MODIFICATION_TYPES.PUT, Buffer.from('k'), Buffer.from('v'), undefined, checkTtl(undefined));
    // field 2 (11 bytes): family "f", key "k", value "v", and no field 6.
    expect([...never.finish().bytes]).toEqual([0x12, 9, 0x12, 1, 0x66, 0x1a, 1, 0x6b, 0x22, 1, 0x76]);
    const expiring = new UpdateEncoder('f', 1);
    expiring.add(MODIFICATION_TYPES.PUT, Buffer.from('k'), Buffer.from('v'), undefined, checkTtl(5000));
    expect([...expiring.finish().bytes]).toEqual([0x12, 15, 0x12, 1, 0x66, 0x1a, 1, 0x6b, 0x22, 1, 0x76, 0x32, 4, 0x35, 0x30, 0x30, 0x30]);
  });

  it('sizes a REMOVE_RANGE whose bounds push its length past 127 and 16383 (a longer length prefix), as the objects encode', () => {
    for (const boundLength of [0, 38, 39, 40, 60, 5_456, 5_457, 5_460]) {
      const bound = Buffer.alloc(boundLength, 0x62);
      const encoder = new UpdateEncoder('f', 2);
      encoder.addRange(bound, bound, bound);
      encoder.add(MODIFICATION_TYPES.PUT, Buffer.from('k'), Buffer.from('v'), undefined, NO_TTL);
      const objects = [
        { ...wireModification('REMOVE_RANGE', 'f', EMPTY, EMPTY, undefined, NO_TTL), rangeFrom: bound, rangeTo: bound, rangePrefix: bound },
        wireModification('PUT', 'f', Buffer.from('k'), Buffer.from('v'), undefined, NO_TTL),
      ];
      const ours = encodeExecuteRequest({ requests: [{ update: { segmentId: '42', modifications: encoder.finish() } }] });
      const theirs = encodeExecuteRequest({ requests: [{ update: { segmentId: '42', modifications: objects } }] } as ExecuteRequest);
      expect(ours.equals(theirs), String(boundLength)).toBe(true);
    }
  });

  it('hands out as many types as modifications were added when fewer than its capacity were', () => {
    const encoder = new UpdateEncoder('f', 5);
    encoder.add(MODIFICATION_TYPES.REMOVE, Buffer.from('a'), EMPTY, undefined, NO_TTL);
    encoder.add(MODIFICATION_TYPES.INSERT, Buffer.from('b'), Buffer.from('v'), undefined, NO_TTL);
    expect([...encoder.finish().types]).toEqual([MODIFICATION_TYPES.REMOVE, MODIFICATION_TYPES.INSERT]);
  });

  it('tracks the key + value bytes', () => {
    const put = new UpdateEncoder('f', 2);
    put.add(MODIFICATION_TYPES.PUT, Buffer.from('ab'), Buffer.from('xyz'), Version.NO_VERSION, '0');
    put.add(MODIFICATION_TYPES.REMOVE, Buffer.from('c'), EMPTY, undefined, '0');
    expect(put.dataBytes).toBe(6);
  });
});

describe('DuplicateKeyCheck', () => {
  it('rejects the second occurrence of a key among many, naming it and its index', () => {
    const check = new DuplicateKeyCheck(4);
    // More keys than the capacity: the table grows.
    for (let i = 0; i < 300; i++) check.add(Buffer.from(`key-${i}`), i, `key-${i}`);
    check.add(new Uint8Array([1, 2, 3]), 300, 'bytes');
    let err: unknown;
    try {
      check.add(Buffer.from('key-17'), 301, 'key-17');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).message).toBe('key "key-17" appears more than once in the batch (index 301)');
    expect(() => check.add(Buffer.from([1, 2, 3]), 302, new Uint8Array([1, 2, 3]))).toThrow('key 0x010203 appears more than once in the batch (index 302)');
  });

  it('tells apart keys that differ in length or in a single byte', () => {
    const check = new DuplicateKeyCheck(2);
    check.add(Buffer.from([0]), 0, 'a');
    check.add(Buffer.from([0, 0]), 1, 'b');
    check.add(Buffer.from([0, 1]), 2, 'c');
    check.add(EMPTY, 3, 'd');
    expect(() => check.add(Buffer.from([0, 0]), 4, 'b')).toThrow(/index 4/);
  });
});
