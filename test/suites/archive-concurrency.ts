/** Archive conformance: concurrent appenders to one page, a killed appending process, a restarted backend. */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ArchivedRender, ArchiveStore } from '../../client';
import { KVT_BIN, tempDir } from '../harness/process';
import { ArchiveSuiteContext, expectAllReadBack, readSharedData, renderOf, renders } from './archive-context';

/** Counts the renders of each block of a page (by locating every render). */
async function blockSizes(store: ArchiveStore, all: ArchivedRender[]): Promise<Map<number, number>> {
  const sizes = new Map<number, number>();
  for (const r of all) {
    const at = await store.locate(r.title, r.rev, r.tid);
    if (at) sizes.set(at.block, (sizes.get(at.block) ?? 0) + 1);
  }
  return sizes;
}

/** Runs `kvt archive append` on `file`, one render per append; resolves the renders acknowledged when killed after `killAfter`. */
function appendUntilKilled(args: string[], file: string, killAfter: number): Promise<{ acknowledged: number; signal: string | null }> {
  const child = spawn(process.execPath, [KVT_BIN, 'archive', 'append', ...args, '--batch', '1', '--block-revisions', '8', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let acknowledged = 0;
  let buffered = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) acknowledged = Math.max(acknowledged, JSON.parse(line).through);
    if (acknowledged >= killAfter) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve({ acknowledged, signal }) : reject(new Error(`the appender exited before it was killed: ${stderr.trim()}`))));
  });
}

/** What a target can do beyond this process: run an appender in a child process, restart its servers. */
export interface ArchiveCapabilities {
  processes: boolean;
  restart: boolean;
}

export function concurrencyConformance(ctx: ArchiveSuiteContext, can: ArchiveCapabilities): void {
  describe('ArchiveStore concurrency and crashes', () => {
    it('loses and duplicates nothing when 8 appenders append to one page at once', async () => {
      const space = await ctx.target().space();
      const all = renders('Contended', 96);
      const handles = Array.from({ length: 8 }, () => space.open({ blockRevisions: 8 }));
      // Appender i appends renders i, i+8, … and also those of appender i+1: every render is appended twice, by two appenders at once.
      const results = await Promise.all(
        handles.map(async (store, i) => {
          const mine = all.filter((_, j) => j % 8 === i || j % 8 === (i + 1) % 8);
          const totals = { appended: 0, alreadyArchived: 0 };
          for (const r of mine) {
            const res = await store.append([r]);
            totals.appended += res.appended;
            totals.alreadyArchived += res.alreadyArchived;
          }
          return totals;
        }),
      );
      expect(results.reduce((n, r) => n + r.appended, 0)).toBe(all.length);
      expect(results.reduce((n, r) => n + r.alreadyArchived, 0)).toBe(all.length);
      await Promise.all(handles.map((h) => h.close()));
      const reader = space.open({ blockRevisions: 8 });
      expect(await reader.stats('Contended')).toMatchObject({ revisions: 96, sealedBlocks: 12, blocks: 12, pendingRevisions: 0 });
      expect([...(await blockSizes(reader, all)).values()]).toEqual(Array(12).fill(8));
      await expectAllReadBack(reader, all);
      await reader.close();
    });

    if (can.processes) {
      it('loses nothing acknowledged when the appending process is killed with SIGKILL', killedAppender(ctx));
    }
    if (can.restart) {
      it('reads and appends after its servers restart, through a reopened store', async () => {
        const space = await ctx.target().space();
        const all = renders('Restarted', 12);
        const before = space.open({ blockRevisions: 4 });
        await before.append(all.slice(0, 6));
        await before.close();
        await ctx.target().restartBackend!();
        const after = space.open({ blockRevisions: 4 });
        await expectAllReadBack(after, all.slice(0, 6));
        await after.append(all.slice(6));
        expect(await after.stats('Restarted')).toMatchObject({ revisions: 12, sealedBlocks: 3, pendingRevisions: 0 });
        await expectAllReadBack(after, all);
        await after.close();
      });
    }
  });
}

function killedAppender(ctx: ArchiveSuiteContext): () => Promise<void> {
  return async () => {
    const space = await ctx.target().space();
    const data = (await readSharedData()).slice(0, 300);
    const all = data.map((r) => renderOf(r));
    using dir = tempDir('kvt-archive-kill-');
    const file = path.join(dir.path, 'renders.jsonl');
    fs.writeFileSync(file, all.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { acknowledged } = await appendUntilKilled(space.cliArgs!, file, 50);
    expect(acknowledged).toBeGreaterThanOrEqual(50);
    const store = space.open({ blockRevisions: 8 });
    await expectAllReadBack(store, all.slice(0, acknowledged));
    const afterKill = (await store.stats()).revisions;
    expect(afterKill).toBeGreaterThanOrEqual(acknowledged);
    // Appending everything again completes the archive without a duplicate.
    const again = await store.append(all);
    expect(again.appended + afterKill).toBe(all.length);
    expect((await store.stats()).revisions).toBe(all.length);
    await expectAllReadBack(store, all);
    await store.close();
  };
}
