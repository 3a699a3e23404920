/**
 * The TypeScript example in README.md runs as written (as an ES module importing the package by its
 * name) against a real cluster, and prints what its comments say.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, TestCluster } from '../harness/process';

const run = promisify(execFile);

/** The first ```ts block after the README's "Using the client" heading. */
export function readmeExample(): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Using the client'));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README.md has no ```ts block under "Using the client"');
  return match[1];
}

describe('README example', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('runs against a real cluster and prints what its comments promise', async () => {
    // Inside the repository, so that `import … from 'kvt'` resolves to this package (self-reference).
    const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'dist', 'readme-'));
    const file = path.join(dir, 'example.mjs');
    fs.writeFileSync(file, readmeExample());
    try {
      const { stdout } = await run(process.execPath, [file], {
        env: { ...process.env, KVT_CONTROLLER: cluster.controllerAddress },
        timeout: 30_000,
      });
      const lines = stdout.trim().split('\n');
      expect(lines[0]).toBe("{ text: 'Hi!' } true true");
      expect(lines[1]).toBe("[ 'rev-0003', 'rev-0002' ]");
      expect(lines[2]).toBe("[ 'rev-0001' ]");
      expect(lines).toHaveLength(3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
