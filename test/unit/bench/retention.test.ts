import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkKeepProfiles, pruneProfiles } from '../../../bench/core/retention';

describe('bench profile retention', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  function results(names: string[], files: string[] = []): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-retention-'));
    dirs.push(dir);
    for (const n of names) {
      fs.mkdirSync(path.join(dir, n));
      fs.writeFileSync(path.join(dir, n, 'CPU.1.cpuprofile'), '{}');
    }
    for (const f of files) fs.writeFileSync(path.join(dir, f), '{}');
    return dir;
  }

  it('removes the oldest profile directories beyond `keep`, newest by their timestamp, and leaves results files alone', () => {
    const names = ['profile-2026-11-23T18-16-36-141Z', 'profile-2026-11-23T20-41-14-254Z-W4', 'profile-2026-11-22T09-00-00-000Z-W4', 'profile-2026-11-23T19-24-00-347Z-W4'];
    const dir = results(names, ['2026-11-22T09-00-00-000Z.json', 'notes.txt']);
    fs.mkdirSync(path.join(dir, 'unrelated'));
    const removed = pruneProfiles(dir, 2);
    expect(removed).toEqual(['profile-2026-11-22T09-00-00-000Z-W4', 'profile-2026-11-23T18-16-36-141Z']);
    expect(fs.readdirSync(dir).sort()).toEqual(['2026-11-22T09-00-00-000Z.json', 'notes.txt', 'profile-2026-11-23T19-24-00-347Z-W4', 'profile-2026-11-23T20-41-14-254Z-W4', 'unrelated']);
  });

  it('removes nothing when `keep` covers them all, and copes with a missing results directory', () => {
    const dir = results(['profile-2026-11-23T18-16-36-141Z']);
    expect(pruneProfiles(dir, 1)).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'profile-2026-11-23T18-16-36-141Z'))).toBe(true);
    expect(pruneProfiles(path.join(dir, 'absent'), 0)).toEqual([]);
  });

  it('names the limit when `keep` is not a count', () => {
    const dir = results([]);
    expect(() => pruneProfiles(dir, -1)).toThrow(/keep-profiles must be an integer ≥ 0, got -1/);
    expect(() => pruneProfiles(dir, 1.5)).toThrow(/keep-profiles/);
    expect(() => checkKeepProfiles(NaN, 'x')).toThrow('--keep-profiles must be an integer ≥ 0, got "x"');
  });
});
