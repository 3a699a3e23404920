import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../client';
import { PageTokens } from '../../../client/revisions/page-token';

describe('list page tokens', () => {
  const tokens = new PageTokens(Buffer.from('secret'));
  const cursor = Buffer.from('10001fffffffffffff', 'hex');

  it('round-trips a cursor for the same title and mode', () => {
    const token = tokens.sign('P', 'latest', cursor);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(tokens.verify('P', 'latest', token).equals(cursor)).toBe(true);
  });

  it('refuses a token with any single bit changed', () => {
    const bytes = Buffer.from(tokens.sign('P', 'all', cursor), 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const changed = Buffer.from(bytes);
        changed[i] ^= bit;
        expect(() => tokens.verify('P', 'all', changed.toString('base64url')), `byte ${i}`).toThrow(InvalidArgumentError);
      }
    }
  });

  it('refuses the tokens of another title, mode or secret, and truncated ones', () => {
    const token = tokens.sign('P', 'latest', cursor);
    expect(() => tokens.verify('Q', 'latest', token)).toThrow('pageToken is not valid for page "Q"');
    expect(() => new PageTokens(Buffer.from('other')).verify('P', 'latest', token)).toThrow('pageToken is not valid for page "P"');
    expect(() => tokens.verify('P', 'all', token)).toThrow('pageToken was made for a listing with allRenders false; this one has allRenders true');
    for (let n = 0; n < token.length; n++) expect(() => tokens.verify('P', 'latest', token.slice(0, n))).toThrow(InvalidArgumentError);
    expect(() => tokens.verify('P', 'latest', 'x'.repeat(129))).toThrow('pageToken is malformed: not a token listRevisions made (129 characters; the maximum is 128, base64url)');
  });
});
