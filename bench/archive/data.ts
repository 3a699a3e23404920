/**
 * The shared data (../shared/data/rust-book-revisions.jsonl.gz) as archive renders: every revision
 * of every page, with a tid from its commit time, read streaming.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as zlib from 'node:zlib';
import { ArchivedRender, timeUuidOf } from '../../client';
import { repoRoot } from '../peers/peer';

/** Where the shared data is. */
export const SHARED_DATA = path.resolve(repoRoot(), '..', 'shared', 'data', 'rust-book-revisions.jsonl.gz');

/** A version 1 UUID at `ms` plus `ticks` of 100 ns, its clock sequence and node from `seed`. */
export function timeUuid(ms: number, ticks: number, seed: string): string {
  const h = createHash('sha1').update(seed).digest();
  return timeUuidOf(ms + Math.floor(ticks / 10_000), h.readUInt16BE(0) & 0x3fff, h.subarray(2, 8), ticks % 10_000);
}

/** A render of the benchmark: a text value. */
export type TextRender = ArchivedRender & { value: string; headers: Record<string, string> };

/** Every revision of the shared data as a render, in file order (one page after another, oldest first). */
export async function loadRenders(limit = Infinity): Promise<TextRender[]> {
  if (!fs.existsSync(SHARED_DATA)) throw new Error(`the shared data is missing: ${SHARED_DATA}`);
  const out: TextRender[] = [];
  const lines = readline.createInterface({ input: fs.createReadStream(SHARED_DATA).pipe(zlib.createGunzip()), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    const r = JSON.parse(line) as { page: string; rev: number; ts: number; text: string };
    out.push({ title: r.page, rev: r.rev, tid: timeUuid(r.ts * 1000, r.rev, r.page), value: r.text, headers: { 'content-type': 'text/markdown' } });
    if (out.length >= limit) break;
  }
  return out;
}

/** Raw bytes as the archive counts them: the value's UTF-8 and the headers as JSON. */
export function rawBytesOf(renders: TextRender[]): number {
  return renders.reduce((n, r) => n + Buffer.byteLength(r.value) + Buffer.byteLength(JSON.stringify(r.headers)), 0);
}

/** The renders grouped by page, in order. */
export function byPage(renders: TextRender[]): Map<string, TextRender[]> {
  const pages = new Map<string, TextRender[]>();
  for (const r of renders) pages.set(r.title, [...(pages.get(r.title) ?? []), r]);
  return pages;
}
