/** How `kvt` reads a table argument: SCOPE/TABLE, both parts non-empty, one slash. */
import { describe, expect, it } from 'vitest';
import { parseTablePath } from '../../../bin/cli';
import { UsageError } from '../../../server-kit/flags';

describe('parseTablePath', () => {
  it('splits SCOPE/TABLE', () => {
    expect(parseTablePath('wiki/pages')).toEqual({ scope: 'wiki', table: 'pages' });
  });

  it('refuses as bad usage an empty scope or table, no slash, or more than one', () => {
    for (const given of ['/pages', 'wiki/', 'wiki', 'wiki/pages/old', '/']) {
      expect(() => parseTablePath(given), given).toThrow(UsageError);
      expect(() => parseTablePath(given), given).toThrow(`table must be written SCOPE/TABLE; got "${given}"`);
    }
  });
});
