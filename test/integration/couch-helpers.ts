/**
 * Helpers of the CouchDB endpoint's integration tests: `kvt couch` as a real process beside a test
 * cluster, PouchDB databases (LevelDB) in a temp directory, and what two databases are compared by —
 * every document's winner with its body and conflicts, and every leaf's revision path.
 */
import * as path from 'node:path';
import { expect } from 'vitest';
import { Pouch, PouchDB, PouchOptions } from '../../bench/couch/pouch';
import { KvtProcess, startKvt, tempDir } from '../harness/process';

/** Starts `kvt couch` on an ephemeral port against the cluster's controller. */
export function startCouch(controller: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<KvtProcess> {
  return startKvt(['couch', '--port', '0', '--controller', controller, ...args], { readyMsg: 'couch started', env });
}

/** Local PouchDB databases in one temp directory, destroyed together. */
export class PouchDatabases {
  private readonly dir = tempDir('kvt-couch-pouch-');
  private readonly open: Pouch[] = [];

  /** A new LevelDB-backed PouchDB. */
  local(name: string): Pouch {
    const db = new PouchDB(path.join(this.dir.path, name));
    this.open.push(db);
    return db;
  }

  /** The remote database `db` of the endpoint at `port`. */
  remote(port: number, db: string, options: PouchOptions = {}): Pouch {
    const remote = new PouchDB(`http://127.0.0.1:${port}/${db}`, options);
    this.open.push(remote);
    return remote;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.open.map((db) => db.close().catch(() => undefined)));
    this.dir.dispose();
  }
}

/** What a database holds, as `allDocs({ include_docs, conflicts })` shows it (conflicts as a set). */
export async function snapshot(db: Pouch): Promise<unknown[]> {
  const { rows } = await db.allDocs({ include_docs: true, conflicts: true });
  return rows.map((r) => {
    const doc = { ...(r.doc ?? {}) };
    if (Array.isArray(doc._conflicts)) doc._conflicts = [...(doc._conflicts as string[])].sort();
    return { id: r.id, rev: r.value?.rev, doc };
  });
}

/** Every leaf of each document with its revision path (`open_revs=all&revs=true`), sorted by rev. */
export async function leaves(db: Pouch, ids: readonly string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const id of ids) {
    const all = (await db.get(id, { open_revs: 'all', revs: true })) as unknown as { ok?: Record<string, unknown> }[];
    out.push(all.map((r) => r.ok).sort((a, b) => String(a?._rev).localeCompare(String(b?._rev))));
  }
  return out;
}

/** Asserts that two databases hold the same documents, winners, conflicts and (for `ids`) leaves with paths. */
export async function expectSameDatabases(a: Pouch, b: Pouch, ids: readonly string[]): Promise<void> {
  const [x, y] = await Promise.all([snapshot(a), snapshot(b)]);
  expect(y.length).toBe(x.length);
  expect(y).toEqual(x);
  expect(await leaves(b, ids)).toEqual(await leaves(a, ids));
}

/** Polls `check` every 100 ms until it returns true or `timeoutMs` passes (then fails with `what`). */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

/** The status of a PouchDB error (e.g. 404), or undefined when `p` resolves. */
export async function statusOf(p: Promise<unknown>): Promise<number | undefined> {
  return p.then(
    () => undefined,
    (err: { status?: number }) => err.status,
  );
}
