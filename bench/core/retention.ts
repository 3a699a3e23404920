/**
 * Retention of CPU profiles under bench/results: every `--profile` run and every full run with a
 * missed target writes a `profile-<time>[-<case>]` directory (about 1 MB each), which would otherwise
 * pile up for ever. The runs' JSON files are small and are the record, so they are never removed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkIntegerFlag, parseIntegerFlag } from './flags';

/** Profile directories kept by default (the newest). */
export const DEFAULT_KEEP_PROFILES = 10;

/** A profile directory's name: `profile-` and the run's ISO time with `:` and `.` replaced by `-`. */
const PROFILE_DIR = /^profile-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z(-.+)?$/;

/** Throws unless `keep` is a count of profile directories (the `--keep-profiles` flag, as `given`). */
export function checkKeepProfiles(keep: number, given?: string): void {
  checkIntegerFlag('--keep-profiles', keep, 0, Infinity, given === undefined ? String(keep) : JSON.stringify(given));
}

/** The count given to `--keep-profiles` (`undefined` when the flag ended the command line). */
export function parseKeepProfiles(given: string | undefined): number {
  return parseIntegerFlag('--keep-profiles', given, 0);
}

/**
 * Removes all but the newest `keep` profile directories in `resultsDir` (their names start with the
 * run's time, so name order is time order); returns the names removed, oldest first.
 */
export function pruneProfiles(resultsDir: string, keep: number): string[] {
  checkKeepProfiles(keep);
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(resultsDir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const profiles = entries
    .filter((e) => e.isDirectory() && PROFILE_DIR.test(e.name))
    .map((e) => e.name)
    .sort();
  const removed = profiles.slice(0, Math.max(0, profiles.length - keep));
  for (const name of removed) fs.rmSync(path.join(resultsDir, name), { recursive: true, force: true });
  return removed;
}
