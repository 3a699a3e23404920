/** `kvt pages` end to end: real processes, a real cluster, output and exit codes. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTable, KeyValueTableFactory, KeyValueTableManager, PageRevisionStore, Serializers } from '../../client';
import { importTid } from '../../bin/cli-pages-bulk';
import { KVT_BIN, tempDir, TestCluster } from '../harness/process';
import { readHistory, SHARED_HISTORY } from '../suites/revisions-shared-data';

const execFileAsync = promisify(execFile);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let cluster: TestCluster;
let manager: KeyValueTableManager;
let factory: KeyValueTableFactory;
const tables: KeyValueTable<Uint8Array, Uint8Array>[] = [];
let tableCount = 0;

async function kvt(args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [KVT_BIN, ...args], {
      env: { ...process.env, KVT_CONTROLLER: cluster.controllerAddress },
      timeout: 300_000,
      maxBuffer: 256 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A fresh table "wiki/pagesN" and a store on it. */
async function freshTable(): Promise<{ path: string; store: PageRevisionStore }> {
  const name = `pages${++tableCount}`;
  await manager.createKeyValueTable('wiki', name, { partitionCount: 4 });
  const table = factory.forKeyValueTable(name, { keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes });
  tables.push(table);
  return { path: `wiki/${name}`, store: new PageRevisionStore(table) };
}

function writeLines(file: string, lines: unknown[], gzip = false): void {
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
  fs.writeFileSync(file, gzip ? zlib.gzipSync(text) : text);
}

describe('kvt pages', () => {
  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    factory = KeyValueTableFactory.withScope('wiki', { controller: cluster.controllerAddress });
    await manager.createScope('wiki');
  });
  afterAll(async () => {
    for (const t of tables) await t.close();
    await factory?.close();
    await manager?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  it('lists its commands, and says in the help of import how tids are derived', async () => {
    const top = await kvt(['--help']);
    expect(top.stdout).toContain('pages');
    const pages = await kvt(['pages', '--help']);
    expect(pages.code).toBe(0);
    for (const c of ['put', 'get', 'list', 'import', 'export', 'archive']) expect(pages.stdout).toContain(`kvt pages ${c} SCOPE/TABLE`);
    const help = await kvt(['pages', 'import', '--help']);
    expect(help.stdout).toContain('deterministically, so importing the same file again writes the same renders (idempotent)');
    const bad = await kvt(['pages', 'get', 'wiki/x', 'P', '--tid', 'x']);
    expect([bad.code, bad.stderr]).toEqual([2, 'kvt pages get: --tid needs --rev (a render is found by its revision and tid)\n']);
  });

  it('puts, gets and lists renders with headers and parts', async () => {
    const { path: t } = await freshTable();
    const put = await kvt(['pages', 'put', t, 'Main_Page', '1', 'hello', '--headers', '{"content-type":"text/plain"}', '--parts', '{"data-parsoid":"{}"}']);
    expect(put.code).toBe(0);
    const tid = put.stdout.trim();
    expect(tid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    using dir = tempDir();
    fs.writeFileSync(path.join(dir.path, 'world.txt'), 'world');
    expect((await kvt(['pages', 'put', t, 'Main_Page', '2', '--file', path.join(dir.path, 'world.txt')])).code).toBe(0);
    expect((await kvt(['pages', 'get', t, 'Main_Page'])).stdout).toBe('world\n');
    expect((await kvt(['pages', 'get', t, 'Main_Page', '--rev', '1', '--part', 'data-parsoid'])).stdout).toBe('{}\n');
    const json = JSON.parse((await kvt(['pages', 'get', t, 'Main_Page', '--rev', '1', '--tid', tid, '--json'])).stdout);
    expect(json).toEqual({ title: 'Main_Page', rev: 1, tid, headers: { 'content-type': 'text/plain' }, value: 'hello', parts: { 'data-parsoid': '{}' } });
    const missing = await kvt(['pages', 'get', t, 'Main_Page', '--rev', '9']);
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([1, '', 'kvt pages get: revision 9 of page "Main_Page" not found\n']);
    const conflict = await kvt(['pages', 'put', t, 'Main_Page', '1', 'again', '--tid', tid, '--if-absent']);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toBe(`kvt pages put: render ${tid} of revision 1 of page "Main_Page" already exists [BAD_KEY_VERSION]\n`);
    const list = await kvt(['pages', 'list', t, 'Main_Page', '--page-size', '1']);
    expect(
      list.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t').filter((_, i) => i !== 1)),
    ).toEqual([
      ['2', '5'],
      ['1', '5'],
    ]);
    expect((await kvt(['pages', 'list', t, 'Main_Page', '--limit', '1'])).stdout.trim().split('\n')).toHaveLength(1);
    const badRev = await kvt(['pages', 'put', t, 'Main_Page', '-1', 'x']);
    expect(badRev.code).toBe(2);
  });

  it('imports every revision of the shared history with a summary line, and they read back byte for byte', { timeout: 600_000 }, async () => {
    const { path: t, store } = await freshTable();
    const r = await kvt(['pages', 'import', t, SHARED_HISTORY]);
    expect(r.stderr).toMatch(/^imported 6,252 revisions of 112 pages \(\d+\.\d MB of lines\) in \d+\.\d s\n$/);
    expect(r.code).toBe(0);
    const history = await readHistory();
    let mismatches = 0;
    for (let i = 0; i < history.length; i += 32) {
      await Promise.all(
        history.slice(i, i + 32).map(async (l) => {
          const render = await store.getRender(l.page, l.rev, importTid(l.ts));
          if (render?.value !== l.text) mismatches++;
        }),
      );
    }
    expect(mismatches).toBe(0);
  });

  it('imports again idempotently, and export → import reproduces the renders', async () => {
    using dir = tempDir();
    const { path: t, store } = await freshTable();
    const lines = (await readHistory()).slice(0, 40);
    const file = path.join(dir.path, 'small.jsonl.gz');
    writeLines(file, lines, true);
    expect((await kvt(['pages', 'import', t, file])).code).toBe(0);
    expect((await kvt(['pages', 'import', t, file])).code).toBe(0);
    const page = lines[0].page;
    const listed = await store.listRevisions(page, { limit: 1000, allRenders: true });
    expect(listed.items.map((x) => x.rev)).toEqual(
      lines
        .filter((l) => l.page === page)
        .map((l) => l.rev)
        .reverse(),
    );
    const exported = await kvt(['pages', 'export', t]);
    expect(exported.code).toBe(0);
    const out = path.join(dir.path, 'export.jsonl');
    fs.writeFileSync(out, exported.stdout);
    const copy = await freshTable();
    expect((await kvt(['pages', 'import', copy.path, out])).code).toBe(0);
    for (const l of lines) expect((await copy.store.getRender(l.page, l.rev, importTid(l.ts)))?.value).toBe(l.text);
    expect((await kvt(['pages', 'export', copy.path, '--title', page])).stdout).toBe((await kvt(['pages', 'export', t, '--title', page])).stdout);
  });

  it('stops at a bad line with its line number, keeping every render before it whole and nothing after', async () => {
    using dir = tempDir();
    const { path: t, store } = await freshTable();
    const good = (rev: number) => ({ page: 'P', rev, ts: 1480000000 + rev, text: `r${rev}` });
    const file = path.join(dir.path, 'bad.jsonl');
    writeLines(file, [good(1), good(2), good(3), { page: 'P', rev: -1, ts: 1, text: 'x' }, good(5)]);
    const r = await kvt(['pages', 'import', t, file]);
    expect([r.code, r.stderr]).toEqual([
      1,
      'kvt pages import: line 4: "rev" must be an integer from 0 to 9007199254740991 (3 revisions were imported, all from the lines before it; nothing after it)\n',
    ]);
    expect((await store.listRevisions('P')).items.map((x) => x.rev)).toEqual([3, 2, 1]);
    const big = path.join(dir.path, 'big.jsonl');
    writeLines(big, [good(6), { ...good(7), headers: { h: 'x'.repeat(70_000) } }, good(8)]);
    const failed = await kvt(['pages', 'import', t, big]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^kvt pages import: line 2: headers are 70008 bytes as JSON; the maximum is 65536 \[INVALID_ARGUMENT\] \(1 revision was imported; the file was read no further\)\n$/);
    expect(await store.getRevision('P', 7)).toBeNull();
    const notJson = path.join(dir.path, 'not.jsonl');
    writeLines(notJson, ['{"page": "P", "rev": 9, "ts": 1, "text": "ok"}', '{oops']);
    expect((await kvt(['pages', 'import', t, notJson])).stderr).toBe('kvt pages import: line 2: not valid JSON (1 revision was imported, all from the lines before it; nothing after it)\n');
  });

  it('archive moves a page history into a kvt archive; get reads archived revisions through --archive', async () => {
    const { path: pages, store } = await freshTable();
    await manager.createKeyValueTable('wiki', 'archive1', { partitionCount: 2 });
    for (let rev = 1; rev <= 5; rev++) await store.putRender({ title: 'Archived', rev, value: `text of revision ${rev}`, headers: { 'content-type': 'text/plain' } });
    const noArchive = await kvt(['pages', 'archive', pages, 'Archived']);
    expect([noArchive.code, noArchive.stderr]).toEqual([2, 'kvt pages archive: kvt pages archive needs --archive kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE\n']);
    const badSpec = await kvt(['pages', 'get', pages, 'Archived', '--archive', 'tape:drive0']);
    expect(badSpec.code).toBe(2);
    expect(badSpec.stderr).toContain('archive must be written kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE; got "tape:drive0"');
    const moved = await kvt(['pages', 'archive', pages, 'Archived', '--archive', 'kvt:wiki/archive1']);
    expect([moved.code, moved.stdout]).toEqual([0, 'archived 4 renders of 1 page(s)\n']);
    // Gone from the hot table: only the archive has revision 2 now.
    expect(await kvt(['pages', 'get', pages, 'Archived', '--rev', '2'])).toMatchObject({ code: 1 });
    expect(await kvt(['pages', 'get', pages, 'Archived', '--rev', '2', '--archive', 'kvt:wiki/archive1'])).toEqual({ code: 0, stdout: 'text of revision 2\n', stderr: '' });
    expect(await kvt(['pages', 'get', pages, 'Archived', '--archive', 'kvt:wiki/archive1'])).toEqual({ code: 0, stdout: 'text of revision 5\n', stderr: '' });
  });
});
