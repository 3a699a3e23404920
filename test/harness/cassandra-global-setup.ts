/**
 * Vitest global setup: a real Cassandra for the Cassandra archive suite
 * (test/integration/archive-cassandra.test.ts), only when that file is part of the run.
 *
 * - `KVT_SKIP_CASSANDRA=1`: the suite is skipped, and this says so.
 * - Cassandra already answers (`.ci/run` started it, or a developer did): the suite uses it.
 * - Otherwise `scripts/cassandra.sh start` obtains and starts it, and it is stopped after the run.
 * When it cannot be started, the suite fails with the script's one line (never a silent skip).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { TestProject } from 'vitest/node';

/** What the suite learns from this setup (`inject('cassandra')`). */
export type CassandraProvision = { state: 'ready'; contactPoint: string; startedHere: boolean } | { state: 'skipped' } | { state: 'failed'; reason: string } | { state: 'not-needed' };

declare module 'vitest' {
  export interface ProvidedContext {
    cassandra: CassandraProvision;
  }
}

const SUITE = /archive-cassandra\.test\.ts$/;
const SCRIPT = path.resolve(__dirname, '..', '..', 'scripts', 'cassandra.sh');
/** A first start downloads Cassandra with Maven: minutes on a slow network. */
const START_TIMEOUT_MS = 15 * 60_000;

function script(command: string): { ok: boolean; out: string; err: string; status: number | null } {
  const r = spawnSync('bash', [SCRIPT, command], { encoding: 'utf8', timeout: START_TIMEOUT_MS });
  return { ok: r.status === 0, out: r.stdout ?? '', err: r.stderr ?? '', status: r.status };
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  // The file filters of this run (`vitest run test/unit/…`): Vitest keeps them on its instance while the run
  // starts, not in the resolved config. Without them the whole suite runs, this file included.
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  const { testFiles } = await project.globTestFiles(filters);
  if (!testFiles.some((f) => SUITE.test(f))) {
    project.provide('cassandra', { state: 'not-needed' });
    return undefined;
  }
  if (process.env.KVT_SKIP_CASSANDRA === '1') {
    console.log('KVT_SKIP_CASSANDRA=1: the Cassandra archive suite (test/integration/archive-cassandra.test.ts) is skipped');
    project.provide('cassandra', { state: 'skipped' });
    return undefined;
  }
  const contactPoint = `127.0.0.1:${process.env.KVT_CASSANDRA_PORT ?? '9042'}`;
  if (script('status').ok) {
    project.provide('cassandra', { state: 'ready', contactPoint, startedHere: false });
    return undefined;
  }
  console.log('Cassandra archive suite: starting Cassandra (scripts/cassandra.sh start)…');
  const started = script('start');
  if (!started.ok) {
    const line = started.err.trim().split('\n').pop() || `scripts/cassandra.sh start exited with ${started.status}`;
    project.provide('cassandra', { state: 'failed', reason: line });
    return undefined;
  }
  console.log(started.out.trim());
  project.provide('cassandra', { state: 'ready', contactPoint, startedHere: true });
  return () => {
    console.log(script('stop').out.trim());
  };
}
