import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const PROCESSES = path.resolve(__dirname, '../../../dist/bench/core/processes.js');

/** True while `pid` runs (a zombie waiting for its reaper counts as gone). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('bench child processes', () => {
  it('are killed, and their temp dirs removed, when the benchmark process dies of an uncaught error', async () => {
    // The benchmark process, as a child: starts a server (sleep stands in), then dies as the
    // benchmark did when its stdout was closed under it (EPIPE), with no chance to stop its peers.
    const script = `
      const { spawn } = require('node:child_process');
      const { killOnExit, makeTempDir } = require(${JSON.stringify(PROCESSES)});
      const dir = makeTempDir('orphan-test');
      const child = killOnExit(spawn('sleep', ['30'], { stdio: 'ignore' }));
      console.log(JSON.stringify({ pid: child.pid, dir }));
      setTimeout(() => { throw new Error('boom'); }, 50);
    `;
    const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('boom');
    const { pid, dir } = JSON.parse(out.stdout.trim()) as { pid: number; dir: string };
    const deadline = Date.now() + 5_000;
    while (running(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(running(pid)).toBe(false);
    expect(fs.existsSync(dir)).toBe(false);
  });
});
