/**
 * `kvt pages import` / `export` without processes: line parsing, and importRevisions / exportRevisions
 * on a PageRevisionStore over the in-memory table (test/integration/cli-pages.test.ts runs the
 * commands on a real cluster).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { exportRevisions, importRevisions, importTid, parseRevisionLine } from '../../../bin/cli-pages-bulk';
import { InMemoryKeyValueTable, PageRevisionStore, Serializers } from '../../../client';
import { KIND } from '../../../client/revisions/key-layout';
import { keysOfKind } from '../../suites/revisions-context';

let tables = 0;
let dir: string;
let stderr: string[];

function freshStore(): { store: PageRevisionStore; table: InMemoryKeyValueTable<Uint8Array, Uint8Array> } {
  const table = new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 4, name: `memory/import-${++tables}` });
  return { store: new PageRevisionStore(table), table };
}

/** Writes JSON lines (objects, or strings taken as they are) to a file of the test's folder. */
function linesFile(name: string, lines: unknown[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
}

/** The lines exportRevisions writes on stdout. */
async function exported(store: PageRevisionStore, title?: string): Promise<string[]> {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
  try {
    await exportRevisions(store, title);
  } finally {
    spy.mockRestore();
  }
  return written.join('').split('\n').filter(Boolean);
}

const line = (rev: number, extra: Record<string, unknown> = {}) => ({ page: 'P', rev, ts: 1480000000 + rev, text: `text of ${rev}`, ...extra });

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-pages-bulk-'));
  stderr = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('parseRevisionLine', () => {
  it('derives the tid from "ts" as a fixed v1 UUID, the same on every import', () => {
    expect(importTid(1480000000)).toBe('9a2e4000-b257-11e6-8000-6b7674696d70');
    expect(parseRevisionLine('{"page":"P","rev":3,"ts":1480000000.5,"text":"t"}', 1)).toEqual({
      title: 'P',
      rev: 3,
      tid: '9a7a8b40-b257-11e6-8000-6b7674696d70',
      value: 't',
      headers: undefined,
      parts: undefined,
    });
  });

  it('reads bytes from "text_b64" and "parts_b64", and refuses either when it is not base64', () => {
    const r = parseRevisionLine(JSON.stringify({ ...line(1, { text: undefined }), text_b64: 'AP8B', parts_b64: { bin: 'AQI=' } }), 2);
    expect(r.value).toEqual(Buffer.from([0, 255, 1]));
    expect(r.parts).toEqual({ bin: Buffer.from([1, 2]) });
    for (const bad of ['!!!!', 'AP8', 'AP 8B===', 7]) {
      expect(() => parseRevisionLine(JSON.stringify({ ...line(1, { text: undefined }), text_b64: bad }), 3)).toThrow('line 3: "text_b64" must be a base64 string');
    }
    expect(() => parseRevisionLine(JSON.stringify({ ...line(1), text_b64: 'AP8B' }), 4)).toThrow('line 4: give "text" or "text_b64", not both');
    // Not base64, yet Buffer.from(…, 'base64') would make bytes of it: refused, not imported as garbage.
    for (const bad of ['not base64!', 'AQI', 'A=QI']) {
      expect(() => parseRevisionLine(JSON.stringify({ ...line(1), parts_b64: { ok: 'AQI=', bin: bad } }), 5)).toThrow('line 5: "parts_b64.bin" must be a base64 string');
    }
  });

  it('names the line and the field of a bad record', () => {
    expect(() => parseRevisionLine('{oops', 5)).toThrow('line 5: not valid JSON');
    expect(() => parseRevisionLine(JSON.stringify(line(-1)), 6)).toThrow(`line 6: "rev" must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
    expect(() => parseRevisionLine(JSON.stringify({ page: 'P', rev: 1, text: 't' }), 7)).toThrow('line 7: "ts" (or "tid") is missing');
    expect(() => parseRevisionLine(JSON.stringify(line(1, { parts: { p: 1 } })), 8)).toThrow('line 8: "parts.p" must be a string');
  });
});

describe('importRevisions', () => {
  it('imports a file again without adding renders: the derived tids are the same', async () => {
    const { store } = freshStore();
    const file = linesFile('twice.jsonl', [line(1), line(2), line(3)]);
    await importRevisions(store, file);
    await importRevisions(store, file);
    const listed = await store.listRevisions('P', { allRenders: true });
    expect(listed.items.map((r) => [r.rev, r.tid])).toEqual([3, 2, 1].map((rev) => [rev, importTid(1480000000 + rev)]));
    expect(stderr.at(-1)).toMatch(/^imported 3 revisions of 1 pages \(0\.0 MB of lines\) in \d+\.\d s\n$/);
  });

  it('stops at a bad line with its number, having written every line before it and none after', async () => {
    const { store } = freshStore();
    const file = linesFile('bad.jsonl', [line(1), line(2), line(3), { ...line(4), text_b64: 'not base64!' }, line(5)]);
    await expect(importRevisions(store, file)).rejects.toThrow('line 4: give "text" or "text_b64", not both (3 revisions were imported, all from the lines before it; nothing after it)');
    expect((await store.listRevisions('P')).items.map((r) => r.rev)).toEqual([3, 2, 1]);
  });

  it('leaves no part of a render the store refused: its chunks and parts are not written, the render before it is whole', async () => {
    const { store, table } = freshStore();
    const big = 'x'.repeat(1_500_000);
    const file = linesFile('refused.jsonl', [line(1, { text: big, parts: { 'data-parsoid': '{}' } }), line(2, { text: big, headers: { h: 'h'.repeat(70_000) } }), line(3)]);
    await expect(importRevisions(store, file)).rejects.toThrow(
      /^line 2: headers are 70008 bytes as JSON; the maximum is 65536 \[INVALID_ARGUMENT\] \(1 revision was imported; the file was read no further\)$/,
    );
    expect(await store.getLatest('P')).toMatchObject({ rev: 1, value: big, parts: { 'data-parsoid': '{}' } });
    expect(await keysOfKind(table, 'P', KIND.RENDER)).toHaveLength(1);
    expect(await keysOfKind(table, 'P', KIND.CHUNK)).toHaveLength(2);
  });
});

describe('exportRevisions', () => {
  it('writes every render of a page, past one listing page, and they import back byte for byte', async () => {
    const { store } = freshStore();
    const renders = Array.from({ length: 150 }, (_, i) => ({ title: 'Long', rev: i + 1, tid: importTid(1480000000 + i), value: `r${i + 1}` }));
    await store.putRenders(renders);
    const lines = await exported(store, 'Long');
    expect(lines).toHaveLength(150);
    const copy = freshStore().store;
    await importRevisions(copy, linesFile('long.jsonl', lines));
    expect(await exported(copy, 'Long')).toEqual(lines);
  });

  it('writes bytes as base64 (value and parts) and text as text, so bytes stay bytes through export and import', async () => {
    const { store } = freshStore();
    const value = new Uint8Array([0, 0xc3, 0x28, 0xff]);
    const tid = importTid(1480000000);
    await store.putRender({ title: 'Bin', rev: 1, tid, value, headers: { 'content-type': 'image/png' }, parts: { meta: 'm', thumb: new Uint8Array([9]) } });
    const lines = await exported(store);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { page: 'Bin', rev: 1, tid, ts: 1480000000, text_b64: 'AMMo/w==', headers: { 'content-type': 'image/png' }, parts: { meta: 'm' }, parts_b64: { thumb: 'CQ==' } },
    ]);
    const copy = freshStore().store;
    await importRevisions(copy, linesFile('bin.jsonl', lines));
    const back = await copy.getRender('Bin', 1, tid);
    expect(back?.value).toEqual(Buffer.from(value));
    expect(back?.parts).toEqual({ meta: 'm', thumb: Buffer.from([9]) });
  });
});
