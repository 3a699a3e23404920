/**
 * A real revision history: every revision of ../shared/data/rust-book-revisions.jsonl.gz stored as
 * renders and read back byte for byte.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PageRevisionStore } from '../../client';
import { REPO_ROOT } from '../harness/process';
import { RevisionsSuiteContext, tidAt } from './revisions-context';

/** The shared revision history (see ../shared/data/README.md). */
export const SHARED_HISTORY = path.resolve(REPO_ROOT, '..', 'shared', 'data', 'rust-book-revisions.jsonl.gz');

/** One line of the shared history. */
export interface HistoryLine {
  page: string;
  rev: number;
  ts: number;
  text: string;
}

/** Every line of the shared history, in file order (it fails loudly when the file is missing). */
export async function readHistory(file = SHARED_HISTORY): Promise<HistoryLine[]> {
  const lines: HistoryLine[] = [];
  const input = fs.createReadStream(file).pipe(zlib.createGunzip());
  for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) if (line.trim() !== '') lines.push(JSON.parse(line) as HistoryLine);
  return lines;
}

/** Runs `fn` over `items` with at most `limit` at once, keeping the order within each group. */
async function byGroup<T>(items: T[], groupOf: (item: T) => string, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(groupOf(item), [...(groups.get(groupOf(item)) ?? []), item]);
  const queue = [...groups.values()];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let group = queue.shift(); group; group = queue.shift()) for (const item of group) await fn(item);
    }),
  );
}

export function sharedDataSuite(ctx: RevisionsSuiteContext): void {
  describe('PageRevisionStore with the shared revision history', () => {
    it('stores every revision of rust-book-revisions.jsonl.gz and reads each back byte for byte', { timeout: 600_000 }, async () => {
      const history = await readHistory();
      expect(history.length).toBe(6252);
      const { store } = await ctx.store();
      const put = (l: HistoryLine) => store.putRender({ title: l.page, rev: l.rev, tid: tidAt(l.ts * 1000), value: l.text, headers: { 'content-type': 'text/markdown' } }).then(() => undefined);
      await byGroup(history, (l) => l.page, 16, put);
      const latest = new Map<string, number>();
      let mismatches = 0;
      await byGroup(
        history,
        (l) => l.page,
        16,
        async (l) => {
          latest.set(l.page, Math.max(latest.get(l.page) ?? 0, l.rev));
          const r = await store.getRender(l.page, l.rev, tidAt(l.ts * 1000));
          if (r === null || r.value !== l.text || Buffer.byteLength(r.value as string) !== Buffer.byteLength(l.text)) mismatches++;
        },
      );
      expect(mismatches).toBe(0);
      expect(latest.size).toBe(112);
      for (const [page, rev] of latest) expect((await store.getLatest(page))?.rev, page).toBe(rev);
      await expectFullListing(store, history[0].page, history.filter((l) => l.page === history[0].page).length);
    });
  });
}

/** Lists every revision of a page in pages of 7 and checks the count and the order. */
async function expectFullListing(store: PageRevisionStore, page: string, revisions: number): Promise<void> {
  const revs: number[] = [];
  let token: string | undefined;
  do {
    const p = await store.listRevisions(page, { limit: 7, pageToken: token });
    revs.push(...p.items.map((r) => r.rev));
    token = p.nextPageToken;
  } while (token);
  expect(revs).toHaveLength(revisions);
  expect(revs).toEqual([...revs].sort((a, b) => b - a));
}
