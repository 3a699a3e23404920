/**
 * The mutation checks' list (scripts/mutants.json, run by `npm run mutants`) stays applicable: every
 * mutant names exactly one place of an existing file, changes it, and names tests that exist. A
 * refactoring that moves a guarded line must carry its mutant along.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { killLeftovers, loadMutants, mutantProblem } from '../../scripts/mutants';
import { tempDir } from '../harness/process';

const root = path.resolve(__dirname, '..', '..');

describe('scripts/mutants.json', () => {
  // The committed list, whatever KVT_MUTANTS_LIST names.
  const mutants = loadMutants(root, path.join(root, 'scripts', 'mutants.json'));

  it('has distinct ids, a sentence of what each guards, and a change for each', () => {
    expect(mutants.length).toBeGreaterThanOrEqual(15);
    expect(new Set(mutants.map((m) => m.id)).size).toBe(mutants.length);
    for (const m of mutants) {
      expect(m.id).toMatch(/^[a-z0-9-]+$/);
      expect(m.guards.length).toBeGreaterThan(20);
      expect(m.to).not.toBe(m.from);
    }
  });

  it('names, for each mutant, one place of an existing file and tests that exist', () => {
    expect(mutants.map((m) => mutantProblem(root, m)).filter((p) => p !== undefined)).toEqual([]);
  });

  it('reports a mutant whose text is gone or repeated', () => {
    const m = mutants[0];
    expect(mutantProblem(root, { ...m, from: 'no such text in any file \u0000' })).toBe(`${m.id}: its text occurs 0 times in ${m.file}, not once`);
    expect(mutantProblem(root, { ...m, from: 'import' })).toMatch(/occurs \d+ times/);
    expect(mutantProblem(root, { ...m, file: 'no/such/file.ts' })).toBe(`${m.id}: no/such/file.ts does not exist`);
  });
});

describe('killLeftovers', () => {
  it('kills the processes started from the copy of the tree, and no other', async () => {
    using copy = tempDir('kvt-mutants-copy-');
    using other = tempDir('kvt-mutants-other-');
    const spawnIdle = (dir: string) => spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', path.join(dir, 'kvt', 'bin', 'kvt.js')], { stdio: 'ignore' });
    const exited = (child: ChildProcess) => new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    const left = spawnIdle(copy.path);
    const bystander = spawnIdle(other.path);
    const leftExit = exited(left);
    try {
      await Promise.all([left, bystander].map((child) => new Promise((resolve) => child.once('spawn', resolve))));
      expect(killLeftovers(path.join(copy.path, 'kvt'))).toBe(1);
      expect(await leftExit).toBe('SIGKILL');
      expect(bystander.exitCode).toBeNull();
      expect(bystander.signalCode).toBeNull();
      expect(killLeftovers(path.join(copy.path, 'kvt'))).toBe(0);
    } finally {
      left.kill('SIGKILL');
      bystander.kill('SIGKILL');
    }
  });
});
