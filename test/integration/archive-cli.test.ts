/** `kvt archive stats|get|append` end to end on a real cluster: output and exit codes. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableManager } from '../../client';
import { KVT_BIN, tempDir, TestCluster } from '../harness/process';
import { renders } from '../suites/archive-context';

const execFileAsync = promisify(execFile);

async function kvt(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [KVT_BIN, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('kvt archive', () => {
  let cluster: TestCluster;
  let connect: string[];
  const dir = tempDir('kvt-archive-cli-');
  const all = renders('Main_Page', 5);

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    const manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('wiki');
    await manager.createKeyValueTable('wiki', 'archive', { partitionCount: 4 });
    await manager.close();
    connect = ['--controller', cluster.controllerAddress];
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
    dir.dispose();
  });

  it('appends renders from JSON lines, acknowledging each batch', async () => {
    const file = path.join(dir.path, 'renders.jsonl');
    const bytes = { title: 'Logo', rev: 1, tid: all[0].tid, value_b64: Buffer.from([0, 255, 1]).toString('base64') };
    fs.writeFileSync(file, [...all.map((r) => JSON.stringify(r)), JSON.stringify(bytes)].join('\n') + '\n');
    const r = await kvt(['archive', 'append', 'kvt:wiki/archive', file, '--batch', '4', '--block-revisions', '4', ...connect]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { appended: 4, alreadyArchived: 0, through: 4 },
      { appended: 2, alreadyArchived: 0, through: 6 },
    ]);
    const again = await kvt(['archive', 'append', 'kvt:wiki/archive', file, ...connect]);
    expect(JSON.parse(again.stdout)).toEqual({ appended: 0, alreadyArchived: 6, through: 6 });
  });

  it('refuses a "value_b64" that is not base64 with its line, appending nothing of its batch', async () => {
    const file = path.join(dir.path, 'bad-b64.jsonl');
    const good = { title: 'Bad_B64', rev: 1, tid: all[0].tid, value: 'fine' };
    fs.writeFileSync(file, [good, { ...good, rev: 2, value: undefined, value_b64: 'not base64!' }].map((r) => JSON.stringify(r)).join('\n') + '\n');
    expect(await kvt(['archive', 'append', 'kvt:wiki/archive', file, ...connect])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'kvt archive append: line 2: "value_b64" must be a base64 string\n',
    });
    expect((await kvt(['archive', 'get', 'kvt:wiki/archive', 'Bad_B64', '1', ...connect])).code).toBe(1);
  });

  it('prints the stats of the archive and of one page', async () => {
    const r = await kvt(['archive', 'stats', 'kvt:wiki/archive', '--json', ...connect]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ pages: 2, revisions: 6, blocks: 3, sealedBlocks: 1 });
    const page = await kvt(['archive', 'stats', 'kvt:wiki/archive', 'Main_Page', ...connect]);
    expect(page.stdout).toMatch(/^pages +1\nrevisions +5\nraw bytes +[\d,]+\nstored bytes +[\d,]+ \([\d.]+% of raw\)\nblocks +2 \(1 sealed\)\n/);
  });

  it('prints a render: its value, or everything with --json; the latest render of a rev without a tid', async () => {
    const r = await kvt(['archive', 'get', 'kvt:wiki/archive', 'Main_Page', '2', ...connect]);
    expect(r).toMatchObject({ code: 0, stdout: all[1].value });
    const json = await kvt(['archive', 'get', 'kvt:wiki/archive', 'Main_Page', '5', all[4].tid, '--json', ...connect]);
    expect(JSON.parse(json.stdout)).toEqual({ title: 'Main_Page', rev: 5, tid: all[4].tid, headers: all[4].headers, value: all[4].value, parts: {}, block: 1, sealed: false });
    const logo = await kvt(['archive', 'get', 'kvt:wiki/archive', 'Logo', '1', '--json', ...connect]);
    expect(JSON.parse(logo.stdout).value).toEqual({ base64: 'AP8B' });
  });

  it('exits 1 with one line for a render not archived, 2 for bad usage', async () => {
    expect(await kvt(['archive', 'get', 'kvt:wiki/archive', 'Main_Page', '9', ...connect])).toEqual({ code: 1, stdout: '', stderr: 'kvt archive get: "Main_Page" rev 9 is not archived\n' });
    expect(await kvt(['archive', 'get', 'wiki/archive', 'Main_Page', '1'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'kvt archive get: archive must be written kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE; got "wiki/archive"\n',
    });
    expect((await kvt(['archive', 'get', 'kvt:wiki/archive', 'Main_Page', 'x', ...connect])).stderr).toBe('kvt archive get: REV must be a non-negative integer; got "x"\n');
    expect((await kvt(['archive', 'nope'])).code).toBe(2);
  });
});
