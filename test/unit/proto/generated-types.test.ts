import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../harness/process';

const REPO = path.resolve(__dirname, '..', '..', '..');
const CHECKED_IN = path.join(REPO, 'proto', 'generated');

/** Every file under `dir`, by its path relative to `dir`. */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, name);
    if (fs.statSync(file).isFile()) files.set(name, fs.readFileSync(file, 'utf8'));
  }
  return files;
}

describe('proto/generated', () => {
  it('holds exactly what `npm run proto:types` generates from the .proto files (run it after changing one)', () => {
    using out = tempDir('kvt-proto-types-');
    execFileSync(process.execPath, [path.join(REPO, 'scripts', 'proto-types.mjs'), out.path], { stdio: 'pipe' });
    const fresh = filesOf(out.path);
    const checkedIn = filesOf(CHECKED_IN);
    expect([...checkedIn.keys()].sort(), 'the files of proto/generated').toEqual([...fresh.keys()].sort());
    const stale = [...fresh].filter(([file, text]) => checkedIn.get(file) !== text).map(([file]) => file);
    expect(stale, 'files of proto/generated that differ from what the generator writes').toEqual([]);
  });
});
