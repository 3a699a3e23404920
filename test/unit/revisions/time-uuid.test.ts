import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, isTimeUuid, timeOf, timeUuidOf } from '../../../client';
import { checkTimeUuid, TimeUuidGenerator } from '../../../client/revisions/time-uuid';

describe('time-based UUIDs', () => {
  it('puts the Unix epoch at the RFC 4122 timestamp 0x01b21dd213814000', () => {
    expect(timeUuidOf(0, 0, Buffer.alloc(6))).toBe('13814000-1dd2-11b2-8000-000000000000');
    expect(timeUuidOf(0, 0x3fff, Buffer.from('ffffffffffff', 'hex'), 9999)).toBe('1381670f-1dd2-11b2-bfff-ffffffffffff');
    expect(timeOf('13814000-1dd2-11b2-8000-000000000000')).toBe(0);
  });

  it('round-trips times and reads the time of any v1 UUID', () => {
    for (const ms of [Date.UTC(1999, 11, 31), Date.UTC(2026, 0, 1, 12, 34, 56, 789), 1480000000 * 1000]) expect(timeOf(timeUuidOf(ms, 1, Buffer.alloc(6)))).toBe(ms);
    expect(timeOf('6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(Date.UTC(1998, 1, 4, 22, 13, 53, 151));
  });

  it('makes ids that strictly increase from one generator, even when its clock stands still or goes back', () => {
    let now = Date.UTC(2026, 0, 1);
    const gen = new TimeUuidGenerator(() => now);
    const ids = [gen.next(), gen.next()];
    now -= 5000;
    ids.push(gen.next());
    now += 10_000;
    ids.push(gen.next());
    const stamps = ids.map((id) => BigInt('0x' + id.slice(15, 18) + id.slice(9, 13) + id.slice(0, 8)));
    for (let i = 1; i < stamps.length; i++) expect(stamps[i] > stamps[i - 1]).toBe(true);
    expect(ids.every(isTimeUuid)).toBe(true);
    expect(new Set(ids.map((id) => id.slice(19))).size).toBe(1); // one clock sequence and node
    expect(parseInt(ids[0].slice(24, 26), 16) & 1).toBe(1); // the multicast bit: not a MAC address
  });

  it('accepts v1 UUIDs of either case, and refuses others naming the field', () => {
    expect(checkTimeUuid('6BA7B810-9DAD-11D1-80B4-00C04FD430C8')).toBe('6ba7b810-9dad-11d1-80b4-00c04fd430c8');
    expect(isTimeUuid('3b241101-e2bb-4255-8caf-4136c566a962')).toBe(false); // version 4
    expect(isTimeUuid('6ba7b810-9dad-11d1-c0b4-00c04fd430c8')).toBe(false); // not the RFC 4122 variant
    expect(() => checkTimeUuid(5, 'tid')).toThrow(InvalidArgumentError);
    expect(() => checkTimeUuid(5, 'tid')).toThrow('tid must be a time-based (version 1) UUID string such as 6ba7b810-9dad-11d1-80b4-00c04fd430c8, got number');
    expect(() => timeUuidOf(0, 0x4000, Buffer.alloc(6))).toThrow('clock sequence is 16384; it must be an integer from 0 to 16383');
    expect(() => timeUuidOf(-12_219_292_800_001, 0, Buffer.alloc(6))).toThrow('time is -12219292800001 ms; a time-based UUID holds times from 1582-10-15 to 5236-03-31');
  });
});
