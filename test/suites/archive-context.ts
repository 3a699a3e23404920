/**
 * What the parts of the archive conformance suite share: the target they run against (a fresh
 * archive space per case, opened by as many handles as a case wants), the shared data, and helpers.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as zlib from 'node:zlib';
import { expect } from 'vitest';
import type { ArchivedRender, ArchiveStore, ArchiveStoreOptions } from '../../client';
import { REPO_ROOT } from '../harness/process';
import { rejection as rejectionOf } from './rejections';

/** A stored block damaged on purpose, three ways. */
export type Damage = 'flip' | 'truncate' | 'header';

/** One empty archive: every handle `open` returns sees the same data. */
export interface ArchiveSpace {
  /** A new handle on this archive. */
  open(options?: ArchiveStoreOptions): ArchiveStore;
  /** Damages the stored (sealed) block `block` of `title` behind the archive's back. */
  damageBlock(title: string, block: number, damage: Damage): Promise<void>;
  /**
   * The `kvt archive` arguments naming this archive (ARCHIVE and connection flags), for cases run in a
   * child process; undefined where the archive cannot outlive this process (the in-memory table).
   */
  cliArgs?: string[];
}

/** What the suite runs against. */
export interface ArchiveTarget {
  /** A fresh, empty archive space. */
  space(): Promise<ArchiveSpace>;
  /** Stops and starts the servers behind the archive (segment stores, Cassandra); absent in memory. */
  restartBackend?(): Promise<void>;
  dispose(): Promise<void>;
}

/** What the suite's parts share. */
export interface ArchiveSuiteContext {
  target(): ArchiveTarget;
}

/** The shared data (../shared/data beside the repository). */
export const SHARED_DATA = path.resolve(REPO_ROOT, '..', 'shared', 'data', 'rust-book-revisions.jsonl.gz');

/** A line of the shared data. */
export interface SharedRevision {
  page: string;
  rev: number;
  ts: number;
  text: string;
}

/** Every revision of the shared data, in file order (pages one after another, oldest first). */
export async function readSharedData(): Promise<SharedRevision[]> {
  if (!fs.existsSync(SHARED_DATA)) throw new Error(`the shared data is missing: ${SHARED_DATA}`);
  const out: SharedRevision[] = [];
  const lines = readline.createInterface({ input: fs.createReadStream(SHARED_DATA).pipe(zlib.createGunzip()), crlfDelay: Infinity });
  for await (const line of lines) if (line) out.push(JSON.parse(line) as SharedRevision);
  return out;
}

const GREGORIAN_OFFSET_MS = 12_219_292_800_000;

/** A version 1 UUID at `ms` (+ `ticks` of 100 ns), its clock sequence and node derived from `seed`. */
export function timeUuid(ms: number, ticks = 0, seed = 'kvt'): string {
  const t = BigInt(ms + GREGORIAN_OFFSET_MS) * 10_000n + BigInt(ticks);
  const hex = t.toString(16).padStart(15, '0');
  const h = createHash('sha1').update(seed).digest('hex');
  const clock = ((parseInt(h.slice(0, 4), 16) & 0x3fff) | 0x8000).toString(16);
  return `${hex.slice(7, 15)}-${hex.slice(3, 7)}-1${hex.slice(0, 3)}-${clock}-${h.slice(4, 16)}`;
}

/** The render of a shared revision: tid from its commit time, a content-type header. */
export function renderOf(r: SharedRevision, title = r.page): ArchivedRender {
  return { title, rev: r.rev, tid: timeUuid(r.ts * 1000, r.rev, r.page), value: r.text, headers: { 'content-type': 'text/markdown' } };
}

/** `count` small renders of one page: revs from `firstRev`, one tid each, `bytes` of text apiece. */
export function renders(title: string, count: number, firstRev = 1, bytes = 200): ArchivedRender[] {
  return Array.from({ length: count }, (_, i) => {
    const rev = firstRev + i;
    const line = `${title} revision ${rev}. `;
    const text = line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
    return { title, rev, tid: timeUuid(1_700_000_000_000 + rev * 1000, 0, title), value: text, headers: { etag: `"${rev}"` } };
  });
}

/** What the archive reads back for a render appended without headers or parts. */
export function expected(r: ArchivedRender): ArchivedRender & { headers: Record<string, string>; parts: Record<string, string | Uint8Array> } {
  return { ...r, tid: r.tid.toLowerCase(), headers: r.headers ?? {}, parts: r.parts ?? {} };
}

/** Reads every render back (at most `concurrency` at once) and checks it equals what was appended. */
export async function expectAllReadBack(store: ArchiveStore, all: ArchivedRender[], concurrency = 16): Promise<void> {
  let next = 0;
  const mismatches: string[] = [];
  const worker = async (): Promise<void> => {
    while (next < all.length) {
      const r = all[next++];
      const got = await store.get(r.title, r.rev, r.tid);
      const want = expected(r);
      if (!got || got.value !== want.value || JSON.stringify(got.headers) !== JSON.stringify(want.headers) || got.tid !== want.tid || got.rev !== want.rev) {
        mismatches.push(`${r.title} rev ${r.rev}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  expect(mismatches).toEqual([]);
}

/** What `p` rejects with (fails the test when it resolves), with the fields the archive's errors carry. */
export const rejection = (p: Promise<unknown>) => rejectionOf<{ code?: string; title?: string; block?: number; index?: number }>(p);

/** `stored` (a sealed block's first chunk) damaged: a flipped byte mid-stream, the end cut off, or a broken header. */
export function damageBytes(stored: Uint8Array, damage: Damage): Buffer {
  const out = Buffer.from(stored);
  if (damage === 'truncate') return out.subarray(0, out.length - 5);
  if (damage === 'header') out[0] ^= 0xff;
  else out[26 + Math.floor((out.length - 26) / 2)] ^= 0xff;
  return out;
}
