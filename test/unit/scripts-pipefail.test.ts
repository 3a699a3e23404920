/**
 * The shell scripts CI runs (`.ci/run` and `scripts/*.sh`) set `-o pipefail`, under which a pipe into
 * a reader that exits early (`head`, `grep -m`, `grep -q`) fails the whole pipeline with 141 whenever
 * the writer is still writing: it did, at random, in `install-chromium.sh`, `cassandra.sh` and then
 * `install-etcd.sh` (`etcd --version | head -n 1`), each time failing CI before any test ran. Such a
 * pipe is allowed only where its failure is caught (`|| true`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = path.resolve(__dirname, '../..');

/** The scripts with `pipefail`, as [path, text]. */
function pipefailScripts(): [string, string][] {
  const files = [
    '.ci/run',
    ...fs
      .readdirSync(path.join(REPO_ROOT, 'scripts'))
      .filter((f) => f.endsWith('.sh'))
      .map((f) => `scripts/${f}`),
  ];
  return files.map((f): [string, string] => [f, fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')]).filter(([, text]) => /set -[a-z]*o pipefail|set -o pipefail/.test(text));
}

/** Lines (not comments) that pipe into a reader that may exit before its writer, without catching the failure. */
function earlyExitPipes(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => !line.startsWith('#'))
    .filter((line) => /\|\s*(head\b|grep\s+(-[a-zA-Z]*[mq]|--max-count|--quiet))/.test(line) && !/\|\|\s*true/.test(line));
}

describe('scripts under pipefail', () => {
  it('finds the pipe that failed CI, and none that does not catch it', () => {
    expect(earlyExitPipes('  etcd --version | head -n 1\n')).toEqual(['etcd --version | head -n 1']);
    expect(earlyExitPipes('x="$(tr : \'\\n\' <f | grep -m1 jamm || true)"\n# a | head comment\n')).toEqual([]);
    const scripts = pipefailScripts();
    expect(scripts.map(([f]) => f)).toEqual(expect.arrayContaining(['.ci/run', 'scripts/install-etcd.sh', 'scripts/install-chromium.sh', 'scripts/cassandra.sh']));
    for (const [file, text] of scripts) expect(earlyExitPipes(text), file).toEqual([]);
  });
});
