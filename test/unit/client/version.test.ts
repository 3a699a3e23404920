import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, Version } from '../../../client';

describe('Version', () => {
  it('round-trips through toString and fromString', () => {
    const v = Version.fromString('17.42');
    expect(v.toString()).toBe('17.42');
    expect(Version.fromString(v.toString()).equals(v)).toBe(true);
    expect(JSON.stringify({ v })).toBe('{"v":"17.42"}');
  });

  it('round-trips the sentinels', () => {
    expect(Version.fromString(Version.NO_VERSION.toString())).toBe(Version.NO_VERSION);
    expect(Version.fromString(Version.NOT_EXISTS.toString())).toBe(Version.NOT_EXISTS);
    expect(Version.NO_VERSION.equals(Version.NOT_EXISTS)).toBe(false);
    expect(Version.NO_VERSION.isNoVersion && Version.NOT_EXISTS.isNotExists).toBe(true);
  });

  it('accepts the full unsigned 64-bit range', () => {
    const max = '18446744073709551615';
    expect(Version.fromString(`${max}.${max}`).sequence).toBe(max);
  });

  it.each(['', 'x', '1', '1.', '.1', '01.2', '1.02', '-1.2', '1.2.3', '1 .2', '18446744073709551616.1', '1.18446744073709551616', 'no_version'])(
    'rejects the malformed version %j with InvalidArgumentError',
    (text) => {
      expect(() => Version.fromString(text)).toThrow(InvalidArgumentError);
      expect(() => Version.fromString(text)).toThrow(/is malformed; expected "<segment>.<sequence>"/);
    },
  );

  it('compares versions of one segment numerically', () => {
    expect(Version.fromString('3.9').compareTo(Version.fromString('3.10'))).toBeLessThan(0);
    expect(Version.fromString('3.10').compareTo(Version.fromString('3.9'))).toBeGreaterThan(0);
    expect(Version.fromString('3.10').compareTo(Version.fromString('3.10'))).toBe(0);
  });

  it('refuses to order versions of different segments with InvalidArgumentError', () => {
    const e = (() => {
      try {
        Version.fromString('1.5').compareTo(Version.fromString('2.5'));
      } catch (err) {
        return err;
      }
    })() as InvalidArgumentError;
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toBe('cannot order 1.5 and 2.5: they belong to different segments (1 and 2)');
    expect(() => Version.NO_VERSION.compareTo(Version.fromString('1.1'))).toThrow(InvalidArgumentError);
  });

  it('treats versions of different segments as unequal', () => {
    expect(Version.fromString('1.5').equals(Version.fromString('2.5'))).toBe(false);
  });
});
