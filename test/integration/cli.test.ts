/** The `kvt` command end to end: real processes, real cluster, output and exit codes. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOf } from '../../client';
import { freePort, KVT_BIN, spawnKvt, startController, tempDir, TestCluster } from '../harness/process';

const execFileAsync = promisify(execFile);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function kvt(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [KVT_BIN, ...args], {
      env: { ...process.env, ...env },
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('kvt command (usage)', () => {
  it('prints the commands for --help and exits 0', async () => {
    const r = await kvt(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['controller', 'segmentstore', 'cluster', 'scope', 'table', 'store', 'put', 'get', 'remove', 'keys', 'import', 'export']) {
      expect(r.stdout).toContain(c);
    }
  });

  it('prints the version of the package for --version and exits 0', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(await kvt(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect((await kvt(['--help'])).stdout).toContain('kvt --version');
  });

  it('rejects an unknown command with one line and exit 2', async () => {
    const r = await kvt(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['kvt: unknown command "frobnicate" (see kvt --help)']);
  });

  it('shows every option with its environment variable in --help of each command', async () => {
    const store = await kvt(['segmentstore', '--help']);
    expect(store.code).toBe(0);
    expect(store.stdout).toContain('--data-dir');
    expect(store.stdout).toContain('KVT_SEGMENTSTORE_PORT');
    const controller = await kvt(['controller', '--help']);
    expect(controller.stdout).toContain('KVT_CONTROLLER_DATA_DIR');
    const put = await kvt(['put', '--help']);
    expect(put.stdout).toContain('--family');
    expect(put.stdout).toContain('KVT_CONTROLLER');
  });

  it('rejects bad usage with one line and exit 2', async () => {
    const missing = await kvt(['put', 'wiki/pages']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('expected 2 to 3 argument(s), got 1');
    const badTable = await kvt(['get', 'nopath', 'k']);
    expect(badTable.code).toBe(2);
    expect(badTable.stderr).toContain('table must be written SCOPE/TABLE; got "nopath"');
    const badPort = await kvt(['controller', '--port', 'abc']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr.trim()).toBe('kvt controller: --port must be an integer; got "abc"');
    const unknown = await kvt(['scope', 'list', '--colour']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown option --colour');
  });

  it('prints the commands of a group, and exits 2 when none is given', async () => {
    const bare = await kvt(['scope']);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toMatch(/^Usage: kvt scope <create \| delete \| list> …\n/);
    expect(bare.stdout).toContain('kvt scope create SCOPE');
    const help = await kvt(['scope', '--help']);
    expect([help.code, help.stdout]).toEqual([0, bare.stdout]);
  });

  it('exits 1 with one line when the controller port is taken', async () => {
    using dir = tempDir();
    const first = await startController(path.join(dir.path, 'a'));
    try {
      const r = await kvt(['controller', '--port', String(first.port), '--data-dir', path.join(dir.path, 'b')]);
      expect(r.code).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`port 127.0.0.1:${first.port} is already in use`);
    } finally {
      await first.stop();
    }
  });
});

describe('kvt command (against a cluster)', () => {
  let cluster: TestCluster;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    env = { KVT_CONTROLLER: cluster.controllerAddress };
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  it('creates scopes and tables, reporting whether they existed', async () => {
    expect((await kvt(['scope', 'create', 'wiki'], env)).stdout).toBe('created\n');
    expect((await kvt(['scope', 'create', 'wiki'], env)).stdout).toBe('exists\n');
    expect((await kvt(['table', 'create', 'wiki/pages', '--partitions', '8'], env)).stdout).toBe('created\n');
    expect((await kvt(['table', 'create', 'wiki/pages', '--partitions', '8'], env)).stdout).toBe('exists\n');
    const list = await kvt(['table', 'list', 'wiki'], env);
    expect(list.stdout).toBe('wiki/pages\n');
    const config = await kvt(['table', 'get', 'wiki/pages'], env);
    expect(JSON.parse(config.stdout)).toMatchObject({ partitionCount: 8 });
    expect((await kvt(['scope', 'list'], env)).stdout.split('\n')).toContain('wiki');
  });

  it('refuses a partition count out of range as bad usage (exit 2) before calling the controller', async () => {
    for (const [given, limit] of [
      ['0', 'the minimum is 1'],
      ['1025', 'the maximum is 1024'],
    ]) {
      const r = await kvt(['table', 'create', 'wiki/bad', '--partitions', given], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--partitions');
      expect(r.stderr).toContain(limit);
    }
    expect((await kvt(['table', 'list', 'wiki'], env)).stdout).not.toContain('wiki/bad');
  });

  it('puts and gets keys, with and without a family', async () => {
    const put = await kvt(['put', 'wiki/pages', '--family', 'Main_Page', 'rev-1', 'hello world'], env);
    expect(put.code).toBe(0);
    expect(put.stdout.trim()).not.toBe('');
    expect((await kvt(['get', 'wiki/pages', '--family', 'Main_Page', 'rev-1'], env)).stdout).toBe('hello world\n');
    await kvt(['put', 'wiki/pages', 'solo', 'alone'], env);
    expect((await kvt(['get', 'wiki/pages', 'solo'], env)).stdout).toBe('alone\n');
    // describe --key finds the family-less key's partition as the client routes it: it holds the entry.
    const solo = await kvt(['table', 'describe', 'wiki/pages', '--key', 'solo', '--contents', '--json'], env);
    const where = JSON.parse(solo.stdout) as { partitions: Array<{ partition: number; contents: { entries: number; bytes: number } }> };
    expect(where.partitions).toHaveLength(1);
    expect(where.partitions[0].contents.entries).toBeGreaterThanOrEqual(1);
    expect(where.partitions[0].partition).toBe(partitionOf(8, null, Buffer.from('solo')));
    const missing = await kvt(['get', 'wiki/pages', '--family', 'Main_Page', 'nope'], env);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe('kvt get: key "nope" not found\n');
  });

  it('takes what a command does from its own arguments only, not from KVT_FAMILY or KVT_LIMIT left in the shell', async () => {
    const shell = { ...env, KVT_FAMILY: 'Shell', KVT_LIMIT: '0', KVT_PARTITIONS: '3' };
    expect((await kvt(['table', 'create', 'wiki/shell'], shell)).stdout).toBe('created\n');
    expect(JSON.parse((await kvt(['table', 'get', 'wiki/shell'], env)).stdout)).toEqual({ partitionCount: 4 });
    await kvt(['put', 'wiki/shell', 'loose', 'v'], shell);
    await kvt(['put', 'wiki/shell', '--family', 'F', 'k', 'v'], shell);
    // The family-less key is family-less, the export is whole, keys is not cut to nothing.
    expect((await kvt(['get', 'wiki/shell', 'loose'], env)).stdout).toBe('v\n');
    expect((await kvt(['export', 'wiki/shell'], shell)).stdout.trim().split('\n')).toHaveLength(2);
    expect(await kvt(['keys', 'wiki/shell', '--family', 'F'], shell)).toEqual({ code: 0, stdout: 'k\n', stderr: '' });
    // The connection still comes from the environment (KVT_CONTROLLER), and the help says which.
    const help = (await kvt(['keys', '--help'])).stdout;
    expect(help).toContain('[env KVT_CONTROLLER]');
    expect(help).not.toContain('KVT_FAMILY');
  });

  it('takes keys and values that look like options after --', async () => {
    expect((await kvt(['put', 'wiki/pages', '--family', 'Opt', '--', '--key', '-h'], env)).code).toBe(0);
    expect((await kvt(['get', 'wiki/pages', '--family', 'Opt', '--', '--key'], env)).stdout).toBe('-h\n');
    expect((await kvt(['put', 'wiki/pages', '--family', 'Opt', '--', '-h', '--help'], env)).code).toBe(0);
    expect((await kvt(['get', 'wiki/pages', '--family', 'Opt', '--', '-h'], env)).stdout).toBe('--help\n');
  });

  it('puts only if absent or only at a version, removes keys (also only at a version), and prints a version with get --json', async () => {
    const at = (...args: string[]) => kvt(['put', 'wiki/pages', '--family', 'Cond', ...args], env);
    const first = await at('--if-absent', 'k', 'v1');
    expect(first.code).toBe(0);
    const v1 = first.stdout.trim();
    expect(await at('--if-absent', 'k', 'v2')).toMatchObject({ code: 1, stdout: '' });
    expect((await at('--if-absent', 'k', 'v2')).stderr).toMatch(/^kvt put: .* \[BAD_KEY_VERSION\]\n$/);
    const read = await kvt(['get', 'wiki/pages', '--family', 'Cond', '--json', 'k'], env);
    expect(JSON.parse(read.stdout)).toEqual({ family: 'Cond', key: 'k', value: 'v1', version: v1 });
    const replaced = await at('--if-version', v1, 'k', 'v2');
    expect(replaced.code).toBe(0);
    const v2 = replaced.stdout.trim();
    expect(v2).not.toBe(v1);
    const stale = await at('--if-version', v1, 'k', 'v3');
    expect([stale.code, stale.stderr]).toEqual([1, expect.stringMatching(/^kvt put: .* \[BAD_KEY_VERSION\]\n$/)]);
    // The message writes versions as put prints them, so the current one can be passed back.
    expect(stale.stderr).toContain(`the key's version is ${v2}, not ${v1}`);
    expect((await kvt(['get', 'wiki/pages', '--family', 'Cond', 'k'], env)).stdout).toBe('v2\n');
    // Bad usage, nothing written: exit 2 and one line naming the flag.
    const malformed = await at('--if-version', 'seven', 'k', 'v4');
    expect([malformed.code, malformed.stderr]).toEqual([2, expect.stringMatching(/^kvt put: --if-version: version "seven" is malformed; expected "<segment>.<sequence>".*\n$/)]);
    const both = await at('--if-absent', '--if-version', v2, 'k', 'v4');
    expect([both.code, both.stderr]).toEqual([2, 'kvt put: --if-absent and --if-version exclude each other\n']);
    // Removal: at a stale version refused, at the current one done; unconditional on a missing key fine.
    const staleRemove = await kvt(['remove', 'wiki/pages', '--family', 'Cond', '--if-version', v1, 'k'], env);
    expect([staleRemove.code, staleRemove.stderr]).toEqual([1, expect.stringMatching(/^kvt remove: .* \[BAD_KEY_VERSION\]\n$/)]);
    expect(await kvt(['remove', 'wiki/pages', '--family', 'Cond', '--if-version', v2, 'k'], env)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await kvt(['get', 'wiki/pages', '--family', 'Cond', 'k'], env)).code).toBe(1);
    expect(await kvt(['remove', 'wiki/pages', '--family', 'Cond', 'k'], env)).toEqual({ code: 0, stdout: '', stderr: '' });
    const missing = await kvt(['remove', 'wiki/pages', '--family', 'Cond', '--if-version', v2, 'k'], env);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringMatching(/^kvt remove: .* \[NO_SUCH_KEY\]\n$/)]);
    // Family-less keys too; get --json leaves the family out.
    await kvt(['put', 'wiki/pages', 'loose-k', 'x'], env);
    expect(JSON.parse((await kvt(['get', 'wiki/pages', '--json', 'loose-k'], env)).stdout)).toEqual({ key: 'loose-k', value: 'x', version: expect.any(String) });
    expect((await kvt(['remove', 'wiki/pages', 'loose-k'], env)).code).toBe(0);
    expect((await kvt(['get', 'wiki/pages', 'loose-k'], env)).code).toBe(1);
    // A version and a TTL together: the replaced entry expires.
    const t1 = (await at('t', 'x')).stdout.trim();
    expect((await at('--if-version', t1, '--ttl-ms', '300', 't', 'y')).code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect((await kvt(['get', 'wiki/pages', '--family', 'Cond', 't'], env)).code).toBe(1);
  });

  it('removes every key of a family under a prefix, or all of it, in one command', async () => {
    for (const key of ['a1', 'a2', 'b1']) expect((await kvt(['put', 'wiki/pages', '--family', 'Range', key, 'v'], env)).code).toBe(0);
    expect(await kvt(['remove', 'wiki/pages', '--family', 'Range', '--prefix', 'a'], env)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await kvt(['keys', 'wiki/pages', '--family', 'Range'], env)).stdout).toBe('b1\n');
    expect((await kvt(['remove', 'wiki/pages', '--family', 'Range', '--all'], env)).code).toBe(0);
    expect(await kvt(['keys', 'wiki/pages', '--family', 'Range'], env)).toEqual({ code: 0, stdout: '', stderr: '' });
    // Bad usage, exit 2: a range needs a family, and takes no key or version.
    const noFamily = await kvt(['remove', 'wiki/pages', '--prefix', 'a'], env);
    expect([noFamily.code, noFamily.stderr]).toEqual([2, 'kvt remove: --prefix needs --family F (a range removal stays within one key family)\n']);
    const withKey = await kvt(['remove', 'wiki/pages', '--family', 'Range', '--prefix', 'a', 'a1'], env);
    expect([withKey.code, withKey.stderr]).toEqual([2, 'kvt remove: --prefix removes a range: give no KEY and no --if-version\n']);
    const noKey = await kvt(['remove', 'wiki/pages', '--family', 'Range'], env);
    expect([noKey.code, noKey.stderr]).toEqual([2, 'kvt remove: expected a KEY, or --prefix P / --all to remove keys of the family\n']);
    const both = await kvt(['remove', 'wiki/pages', '--family', 'Range', '--prefix', 'a', '--all'], env);
    expect([both.code, both.stderr]).toEqual([2, 'kvt remove: --prefix and --all exclude each other\n']);
  });

  it('lists keys of a family in order, with prefix, reverse and limit', async () => {
    for (const k of ['b', 'a2', 'c', 'a1']) await kvt(['put', 'wiki/pages', '--family', 'Fam', k, 'v'], env);
    expect((await kvt(['keys', 'wiki/pages', '--family', 'Fam'], env)).stdout).toBe('a1\na2\nb\nc\n');
    expect((await kvt(['keys', 'wiki/pages', '--family', 'Fam', '--prefix', 'a'], env)).stdout).toBe('a1\na2\n');
    expect((await kvt(['keys', 'wiki/pages', '--family', 'Fam', '--reverse', '--limit', '2'], env)).stdout).toBe('c\nb\n');
    // A bare bool flag never takes the next argument as its value.
    expect((await kvt(['keys', '--reverse', 'wiki/pages', '--family', 'Fam'], env)).stdout).toBe('c\nb\na2\na1\n');
    expect((await kvt(['keys', 'wiki/pages', '--family', 'Fam', '--reverse=false', '--limit', '1'], env)).stdout).toBe('a1\n');
  });

  it('imports JSON lines and exports them again', async () => {
    await kvt(['table', 'create', 'wiki/bulk', '--partitions', '4'], env);
    using dir = tempDir();
    const file = path.join(dir.path, 'in.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 600; i++) lines.push(JSON.stringify({ family: `page-${i % 7}`, key: `k${String(i).padStart(4, '0')}`, value: `v${i}` }));
    lines.push(JSON.stringify({ key: 'loose', value: { json: true } }));
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const imported = await kvt(['import', 'wiki/bulk', file], env);
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain('imported 601 entries');
    const exported = await kvt(['export', 'wiki/bulk'], env);
    expect(exported.code).toBe(0);
    const got = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(got).toHaveLength(601);
    const expected = lines.map((l) => JSON.parse(l)).map((r) => ({ ...r, value: typeof r.value === 'string' ? r.value : JSON.stringify(r.value) }));
    const key = (r: { family?: string; key: string }) => `${r.family ?? ''}/${r.key}`;
    expect(got.map(key).sort()).toEqual(expected.map(key).sort());
    const byKey = new Map(got.map((r) => [key(r), r.value]));
    for (const r of expected) expect(byKey.get(key(r))).toBe(r.value);
    const oneFamily = await kvt(['export', 'wiki/bulk', '--family', 'page-3'], env);
    expect(oneFamily.stdout.trim().split('\n')).toHaveLength(expected.filter((r) => r.family === 'page-3').length);
  });

  it('rejects a bad import line naming the line and field, after importing every line before it', async () => {
    await kvt(['table', 'create', 'wiki/partial', '--partitions', '4'], env);
    using dir = tempDir();
    const file = path.join(dir.path, 'bad.jsonl');
    const good = Array.from({ length: 2000 }, (_, i) => JSON.stringify(i % 2 ? { key: `k${i}`, value: 'v' } : { family: `f${i % 3}`, key: `k${i}`, value: 'v' }));
    fs.writeFileSync(file, [...good, '{"key":5,"value":"x"}', '{"key":"after","value":"x"}'].join('\n') + '\n');
    const r = await kvt(['import', 'wiki/partial', file], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('kvt import: line 2001: "key" must be a string (2,000 entries were imported, all from the lines before it; nothing after it)\n');
    const exported = await kvt(['export', 'wiki/partial'], env);
    expect(exported.stdout.trim().split('\n')).toHaveLength(2000);
  });

  it('round-trips any bytes through export and import, with a BOM and CRLF lines accepted', async () => {
    await kvt(['table', 'create', 'wiki/binary', '--partitions', '2'], env);
    using dir = tempDir();
    const file = path.join(dir.path, 'bin.jsonl');
    const records: Record<string, string>[] = [
      { family: 'F', key_b64: Buffer.from([0xff, 0x01]).toString('base64'), value_b64: Buffer.from([0x00, 0xc3, 0x28, 0xff]).toString('base64') },
      { family: 'F', key_b64: Buffer.from([0xfe, 0x01]).toString('base64'), value: 'plain' },
      { key: 'é\u0000\n', value: '' },
      { family: 'Fé', key: 'k', value_b64: Buffer.from([0x80]).toString('base64') },
    ];
    fs.writeFileSync(file, '\uFEFF' + records.map((r) => JSON.stringify(r)).join('\r\n') + '\r\n');
    expect((await kvt(['import', 'wiki/binary', file], env)).stderr).toBe('imported 4 entries\n');
    const exported = await kvt(['export', 'wiki/binary'], env);
    const got = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const sortKey = (r: Record<string, string>) => JSON.stringify([r.family ?? '', r.key ?? '', r.key_b64 ?? '']);
    expect(got.sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).toEqual([...records].sort((a, b) => sortKey(a).localeCompare(sortKey(b))));
    // And back again: the export imports into an equal table.
    await kvt(['table', 'create', 'wiki/binary2', '--partitions', '2'], env);
    fs.writeFileSync(file, exported.stdout);
    expect((await kvt(['import', 'wiki/binary2', file], env)).stderr).toBe('imported 4 entries\n');
    expect((await kvt(['export', 'wiki/binary2'], env)).stdout.trim().split('\n').sort()).toEqual(exported.stdout.trim().split('\n').sort());
  });

  it('refuses a file that is not UTF-8 text, naming base64 as the way', async () => {
    using dir = tempDir();
    const file = path.join(dir.path, 'latin1.jsonl');
    fs.writeFileSync(file, Buffer.concat([Buffer.from('{"key":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('","value":"v"}\n')]));
    const r = await kvt(['import', 'wiki/pages', file], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'kvt import: the file is not valid UTF-8 text (use "key_b64" / "value_b64" for binary keys and values) (0 entries were imported, all from the lines before it; nothing after it)\n',
    );
  });

  it('stops an export quietly when its reader goes away', async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      // 2,000 lines (~100 KB) into a reader that takes 100 bytes: later writes fail with EPIPE.
      const child = execFile(
        'bash',
        ['-c', `"${process.execPath}" "${KVT_BIN}" export wiki/partial | head -c 100 > /dev/null; exit \${PIPESTATUS[0]}`],
        { env: { ...process.env, ...env } },
        (err, _stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stderr });
        },
      );
      child.stdin?.end();
    });
    expect(r).toEqual({ code: 0, stderr: '' });
  });

  it('puts a value from stdin or a file and gets it to a file, byte for byte', async () => {
    using tmp = tempDir('kvt-cli-values-');
    const dir = tmp.path;
    const binary = Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 13, 0x80, 0x41]);
    fs.writeFileSync(path.join(dir, 'in.bin'), binary);
    const fromFile = await kvt(['put', 'wiki/bulk', 'file-key', '--value-file', path.join(dir, 'in.bin')], env);
    expect(fromFile.code).toBe(0);
    expect(await kvt(['get', 'wiki/bulk', 'file-key', '--out', path.join(dir, 'out.bin')], env)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'out.bin')).equals(binary)).toBe(true);
    const piped = await new Promise<{ code: number; stdout: string }>((resolve) => {
      const child = execFile(process.execPath, [KVT_BIN, 'put', 'wiki/bulk', 'stdin-key', '-'], { env: { ...process.env, ...env }, encoding: 'utf8' }, (err, stdout) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout }),
      );
      child.stdin!.end(binary);
    });
    expect(piped.code).toBe(0);
    expect(await kvt(['get', 'wiki/bulk', 'stdin-key', '--out', path.join(dir, 'stdin.bin')], env)).toMatchObject({ code: 0 });
    expect(fs.readFileSync(path.join(dir, 'stdin.bin')).equals(binary)).toBe(true);
    expect(await kvt(['put', 'wiki/bulk', 'k', 'v', '--value-file', path.join(dir, 'in.bin')], env)).toEqual({
      code: 2,
      stdout: '',
      stderr: 'kvt put: give the value as VALUE, "-" (stdin) or --value-file F: exactly one\n',
    });
    expect(await kvt(['put', 'wiki/bulk', 'k', '--value-file', path.join(dir, 'missing.bin')], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: `kvt put: cannot read the value from ${path.join(dir, 'missing.bin')}: ENOENT\n`,
    });
    expect((await kvt(['get', 'wiki/bulk', 'k', '--json', '--out', 'x'], env)).code).toBe(2);
  });

  it('deletes tables and scopes', async () => {
    expect((await kvt(['table', 'delete', 'wiki/bulk'], env)).stdout).toBe('deleted\n');
    expect((await kvt(['table', 'delete', 'wiki/bulk'], env)).stdout).toBe('missing\n');
    const refused = await kvt(['scope', 'delete', 'wiki'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[INVALID_ARGUMENT]');
  });
});

describe('kvt store (a cluster losing a store)', () => {
  let cluster: TestCluster;
  let env: NodeJS.ProcessEnv;
  /** Store ids, ordered as placement goes: store 0 gets partitions 0, 2, … of a new table. */
  let ids: string[];
  let addresses: string[];
  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2, controllerArgs: ['--heartbeat-interval-ms', '100', '--store-timeout-ms', '1500'] });
    env = { KVT_CONTROLLER: cluster.controllerAddress };
    const started = await Promise.all(cluster.stores.map(async (s) => ({ id: String((await s.waitForLog('segment store started')).storeId), address: s.address })));
    started.sort((a, b) => (a.id < b.id ? -1 : 1));
    ids = started.map((s) => s.id);
    addresses = started.map((s) => s.address);
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  /** `kvt store list` as rows of cells. */
  async function listed(): Promise<string[][]> {
    const r = await kvt(['store', 'list'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    return r.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/ {2,}/));
  }

  /** `kvt table describe` as its title line and rows of cells. */
  async function described(args: string[]): Promise<{ title: string; rows: string[][] }> {
    const r = await kvt(['table', 'describe', ...args], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [title, ...lines] = r.stdout.trimEnd().split('\n');
    return { title, rows: lines.map((line) => line.split(/ {2,}/)) };
  }

  it('lists the stores under a header, and documents both commands in --help', async () => {
    expect((await kvt(['scope', 'create', 'ops'], env)).code).toBe(0);
    expect((await kvt(['table', 'create', 'ops/t', '--partitions', '4'], env)).stdout).toBe('created\n');
    const rows = await listed();
    expect(rows[0]).toEqual(['ID', 'ADDRESS', 'STATE', 'LAST HEARTBEAT', 'SEGMENTS']);
    expect(rows.slice(1).map((r) => [r[0], r[1], r[2], r[4]])).toEqual([
      [ids[0], addresses[0], 'live', '2'],
      [ids[1], addresses[1], 'live', '2'],
    ]);
    for (const row of rows.slice(1)) expect(row[3]).toMatch(/^\d+\.\d s ago$/);

    // The table's partitions alternate between the two stores, in id order.
    const plain = await described(['ops/t']);
    expect(plain.title).toMatch(/^ops\/t: ACTIVE, 4 partitions, created \d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(plain.rows[0]).toEqual(['PARTITION', 'HASH RANGE', 'SEGMENT', 'STORE', 'ADDRESS', 'STATE']);
    expect(plain.rows.slice(1).map((r) => [r[0], r[1], r[3], r[4], r[5]])).toEqual([
      ['0', '[0, 0.25)', ids[0], addresses[0], 'live'],
      ['1', '[0.25, 0.5)', ids[1], addresses[1], 'live'],
      ['2', '[0.5, 0.75)', ids[0], addresses[0], 'live'],
      ['3', '[0.75, 1)', ids[1], addresses[1], 'live'],
    ]);

    const group = await kvt(['store', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('kvt store list');
    expect(group.stdout).toContain('kvt store remove STORE-ID [--force]');
    const help = await kvt(['store', 'remove', '--help']);
    expect(help.stdout).toContain('--force');
    expect(help.stdout).not.toContain('KVT_FORCE');
  });

  it('refuses bad usage (exit 2), a live store, an unknown id and a store holding data without --force (exit 1)', async () => {
    const usage = await kvt(['store', 'remove'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('kvt store remove: expected 1 argument(s), got 0; usage: kvt store remove STORE-ID [--force]\n');
    const live = await kvt(['store', 'remove', ids[1]], env);
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(new RegExp(`^kvt store remove: segment store ${ids[1]} at ${addresses[1]} is live .*: stop it first \\[SEGMENT_STORE_LIVE\\]\n$`));
    const unknown = await kvt(['store', 'remove', 'nope'], env);
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'kvt store remove: segment store nope is not known to the controller [SEGMENT_STORE_NOT_FOUND]\n' });

    expect((await kvt(['put', 'ops/t', '--family', 'f1', 'k', 'v'], env)).code).toBe(0);
    // f1 lives in one partition: --family shows just that one, holding the entry (1 + 1 key and value bytes).
    const f1 = await described(['ops/t', '--contents', '--family', 'f1']);
    expect(f1.rows[0]).toEqual(['PARTITION', 'HASH RANGE', 'SEGMENT', 'STORE', 'ADDRESS', 'STATE', 'ENTRIES', 'BYTES', 'ERROR']);
    expect(f1.rows).toHaveLength(2);
    expect(f1.rows[1].slice(5)).toEqual(['live', '1', '2']);
    const f1Partition = Number(f1.rows[1][0]);
    const json = await kvt(['table', 'describe', 'ops/t', '--contents', '--json'], env);
    const parsed = JSON.parse(json.stdout) as { state: string; partitions: Array<{ partition: number; contents: { entries: number } }> };
    expect(parsed.state).toBe('ACTIVE');
    expect(parsed.partitions.map((p) => p.contents.entries)).toEqual([0, 1, 2, 3].map((i) => (i === f1Partition ? 1 : 0)));
    await cluster.stores.find((s) => s.address === addresses[1])!.kill('SIGKILL');
    const deadline = Date.now() + 30_000;
    while ((await listed())[2][2] !== 'dead') {
      if (Date.now() > deadline) throw new Error('the killed store was never listed dead');
      await new Promise((r) => setTimeout(r, 100));
    }
    const holds = await kvt(['store', 'remove', ids[1]], env);
    expect(holds).toMatchObject({ code: 1, stdout: '' });
    expect(holds.stderr).toBe(
      `kvt store remove: segment store ${ids[1]} holds the only copy of 2 partitions of ACTIVE tables: ops/t (partitions 1, 3); ` +
        'removing it loses their data: remove it with force to give them new, empty segments on live stores [SEGMENT_STORE_HOLDS_DATA]\n',
    );
    expect((await listed()).map((r) => r[0])).toEqual(['ID', ids[0], ids[1]]);
    // The dead store's partitions say so, and cannot be counted.
    const dead = await described(['ops/t', '--contents']);
    expect(dead.rows.slice(1).map((r) => r.slice(5))).toEqual(
      [0, 1, 2, 3].map((i) => {
        if (i % 2 === 1) return ['dead', '?', '?', 'UNAVAILABLE'];
        return i === f1Partition ? ['live', '1', '2'] : ['live', '0', '0'];
      }),
    );
  });

  it('removes the dead store with --force, reporting the lost partitions; again it reports the same removal', async () => {
    const removed = await kvt(['store', 'remove', ids[1], '--force'], env);
    expect(removed).toEqual({
      code: 0,
      stderr: '',
      stdout: `removed ${ids[1]} (last at ${addresses[1]})\nlost data: ops/t partitions 1, 3 (their data stayed on the removed store; they start again empty)\n`,
    });
    const again = await kvt(['store', 'remove', ids[1]], env);
    expect(again).toMatchObject({ code: 0, stdout: removed.stdout.replace('removed ', 'removed before: ') });
    const rows = await listed();
    expect(rows.map((r) => [r[0], r[2], r[4]])).toEqual([
      ['ID', 'STATE', 'SEGMENTS'],
      [ids[0], 'live', '4'],
    ]);
    const moved = await described(['ops/t']);
    expect(moved.rows.slice(1).map((r) => [r[3], r[5]])).toEqual(Array(4).fill([ids[0], 'live']));
    // The table works on every partition again.
    for (let f = 0; f < 8; f++) expect((await kvt(['put', 'ops/t', '--family', `f${f}`, 'k2', `v${f}`], env)).code).toBe(0);
    for (let f = 0; f < 8; f++) expect((await kvt(['get', 'ops/t', '--family', `f${f}`, 'k2'], env)).stdout).toBe(`v${f}\n`);
  });
});

describe('kvt cluster', () => {
  it('fails to start with one line: an unusable data directory, ports past 65535', async () => {
    using file = tempDir();
    fs.writeFileSync(path.join(file.path, 'plain'), '');
    const r = await kvt(['cluster', '--data-dir', path.join(file.path, 'plain', 'x')]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^kvt cluster: cannot create the data directory .*plain\/x: ENOTDIR/);
    const ports = await kvt(['cluster', '--data-dir', file.path, '--segment-store-port', '65535', '--segment-stores', '2']);
    expect(ports.code).toBe(2);
    expect(ports.stderr).toBe('kvt cluster: --segment-store-port 65535 with --segment-stores 2 needs ports up to 65536; the maximum is 65535\n');
    const metrics = await kvt(['cluster', '--data-dir', file.path, '--segment-store-port', '0', '--metrics-port', '65534', '--segment-stores', '2']);
    expect(metrics).toEqual({ code: 2, stdout: '', stderr: 'kvt cluster: --metrics-port 65534 with --segment-stores 2 needs ports up to 65536; the maximum is 65535\n' });
    const stray = await kvt(['cluster', 'extra', '--data-dir', file.path, '--controller-port', String(await freePort()), '--segment-store-port', '0']);
    expect(stray).toEqual({ code: 2, stdout: '', stderr: 'kvt cluster: unexpected argument "extra" (see --help)\n' });
    expect(fs.readdirSync(file.path)).toEqual(['plain']);
  });

  it('stops every process and exits 1 when one of them dies on its own', async () => {
    using dir = tempDir();
    // The store's port is taken: it exits at once, and the cluster with it.
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const storePort = (taken.address() as net.AddressInfo).port;
    const cluster = spawnKvt(['cluster', '--data-dir', dir.path, '--controller-port', String(await freePort()), '--segment-store-port', String(storePort), '--segment-stores', '1']);
    try {
      expect(await cluster.waitForExit()).toBe(1);
      expect(cluster.stderr.join('')).toContain(`port 127.0.0.1:${storePort} is already in use`);
      expect(cluster.logs.filter((l) => l.msg === 'controller stopped')).toHaveLength(1);
    } finally {
      await cluster.kill();
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('runs a controller and two segment stores, and stops them all on SIGINT', async () => {
    using dir = tempDir();
    const port = await freePort();
    const cluster = spawnKvt(['cluster', '--data-dir', dir.path, '--controller-port', String(port), '--segment-store-port', '0']);
    try {
      await cluster.waitForLog('controller started', 30_000);
      const deadline = Date.now() + 30_000;
      while (cluster.logs.filter((l) => l.msg === 'registered with controller').length < 2) {
        if (Date.now() > deadline || !cluster.running) throw new Error(`stores did not register: ${cluster.stderr.join('')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const env = { KVT_CONTROLLER: `127.0.0.1:${port}` };
      expect((await kvt(['scope', 'create', 'demo'], env)).stdout).toBe('created\n');
      expect((await kvt(['table', 'create', 'demo/t', '--partitions', '2'], env)).stdout).toBe('created\n');
      expect(fs.readdirSync(dir.path).sort()).toEqual(['controller', 'segmentstore-0', 'segmentstore-1']);
      cluster.child.kill('SIGINT');
      expect(await cluster.waitForExit()).toBe(0);
      expect(cluster.logs.filter((l) => l.msg === 'segment store stopped')).toHaveLength(2);
      expect(cluster.logs.filter((l) => l.msg === 'controller stopped')).toHaveLength(1);
    } finally {
      await cluster.kill();
    }
  });
});
