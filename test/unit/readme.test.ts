/** README.md stays true: generated tables match the code, every wire error code is documented. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../bin/cli';
import * as client from '../../client';
import { ErrorCodes } from '../../proto/error-codes';
import { toKvtError } from '../../client/internal/status-to-error';
import { ERROR_CODE_ROWS, updatedReadme } from '../../scripts/readme-tables';
import { REPO_ROOT } from '../harness/process';

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

describe('README.md', () => {
  it('has configuration and error-code tables identical to what the code generates (npm run readme)', () => {
    expect(updatedReadme(readme)).toBe(readme);
  });

  it('documents every wire error code, each with a client error class that exists', () => {
    const documented = new Set(ERROR_CODE_ROWS.map(([code]) => code));
    for (const code of Object.values(ErrorCodes)) expect(documented, code).toContain(code);
    for (const [, cls] of ERROR_CODE_ROWS) expect(typeof (client as Record<string, unknown>)[cls], cls).toBe('function');
  });

  it('names for every wire code the class and code a caller gets when a server answers with it', () => {
    for (const [code, cls] of ERROR_CODE_ROWS) {
      if (!(Object.values(ErrorCodes) as string[]).includes(code)) continue;
      const err = toKvtError({ code, message: 'from the server', index: -1, segmentId: '' });
      expect([err.code, err.name], code).toEqual([code, cls]);
    }
  });

  it('mentions every option of the client commands', () => {
    for (const [name, command] of Object.entries(COMMANDS)) {
      for (const option of command.options) expect(readme, `kvt ${name} --${option.flag}`).toContain(`--${option.flag}`);
    }
  });

  it('shows the two-command quickstart and the test command', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
