/** `--log-level` on a real process: the lines below the level are not written, the ones at it are. */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, spawnKvt, tempDir } from '../harness/process';

/** A store whose controller never answers: it warns once, then logs each further attempt at debug level. */
async function storeLogs(level: string): Promise<Array<Record<string, unknown>>> {
  using dir = tempDir('kvt-ops-logs-');
  const nobody = `127.0.0.1:${await freePort()}`;
  const store = spawnKvt([
    'segmentstore',
    '--port',
    '0',
    '--data-dir',
    path.join(dir.path, 'store'),
    '--controller',
    nobody,
    '--register-retry-min-ms',
    '20',
    '--register-retry-max-ms',
    '50',
    '--log-level',
    level,
  ]);
  try {
    await store.waitForLog('controller unreachable; retrying registration');
    if (level === 'debug') await store.waitForLog('registration retry failed');
  } finally {
    expect(await store.stop()).toBe(0);
  }
  return store.logs;
}

describe('--log-level', () => {
  it('warn: the warnings only, none of the info lines (start, stop) nor the debug ones', async () => {
    const logs = await storeLogs('warn');
    expect(logs.length).toBeGreaterThan(0);
    expect(new Set(logs.map((r) => r.level))).toEqual(new Set(['warn']));
    expect(logs.some((r) => r.msg === 'segment store started' || r.msg === 'segment store stopped' || r.msg === 'registration retry failed')).toBe(false);
  });

  it('debug: every line, the debug ones included, each a JSON object with the usual fields', async () => {
    const logs = await storeLogs('debug');
    for (const msg of ['effective config', 'segment store started', 'controller unreachable; retrying registration', 'registration retry failed', 'segment store stopped']) {
      expect(
        logs.some((r) => r.msg === msg),
        msg,
      ).toBe(true);
    }
    for (const r of logs) expect(r).toMatchObject({ level: expect.stringMatching(/^(debug|info|warn|error)$/), ts: expect.any(String), component: 'segmentstore', msg: expect.any(String) });
  });
});
