/**
 * The archive's backend on Apache Cassandra through `cassandra-driver` (tables: cassandra-schema.ts).
 * The only module that loads the driver, and only when a store first connects.
 *
 * Lightweight transactions (Paxos) are used exactly where the design needs a decision that two
 * writers must not both win, and nowhere else:
 * - the page's compare-and-set (`IF version = ?` on the static columns, batched with the index rows
 *   of the same partition): it assigns renders to the open block and decides when the block is
 *   full, so the count per block is exact and a render racing its own retry is indexed once;
 * - the first part of a sealed block (`IF NOT EXISTS`, batched with its other parts in the block's
 *   partition): two handles sealing the same full block cannot both write it, so a sealed block is
 *   written once, never rewritten.
 * Everything else is a plain write or read at the configured consistency: index rows are written
 * only inside the compare-and-set, reads retry when a seal moved what they looked for.
 */
import type * as Cassandra from 'cassandra-driver';
import { InvalidArgumentError, ServiceError, UnavailableError } from '../errors';
import type { AppendEntry, ArchiveBackend, BackendSizes, IndexHit, OpenContent, PageSnapshot, PageState, StoredContent } from './archive-backend';
import { emptyPageState } from './archive-backend';
import { ArchiveCorruptedError } from './archive-errors';
import { chunk } from './block-codec';
import { KEYSPACE_PATTERN, schemaStatements, statements } from './cassandra-schema';
import { EncodedRecord, revisionId } from './record-codec';

/** Parts of a sealed block: at most 1 MiB each, Cassandra's comfortable cell size. */
const PART_BYTES = 1024 * 1024;

/** Consistency levels by name. */
export type CassandraConsistency = 'ANY' | 'ONE' | 'TWO' | 'THREE' | 'QUORUM' | 'ALL' | 'LOCAL_QUORUM' | 'EACH_QUORUM' | 'LOCAL_ONE';

/** How to reach Cassandra and where the archive lives there. */
export interface CassandraConnectionOptions {
  /** `host` or `host:port` (default port 9042), at least one. */
  contactPoints: string[];
  /** The keyspace (created with `replication` if missing): 1–48 of `[A-Za-z0-9_]`, case-sensitive. */
  keyspace: string;
  /** The data center the driver treats as local. @default 'datacenter1' */
  localDataCenter?: string;
  /** Replication of a keyspace the store creates. @default { class: 'SimpleStrategy', replication_factor: 1 } */
  replication?: Record<string, string | number>;
  /** Consistency of reads and writes. @default 'LOCAL_QUORUM' */
  consistency?: CassandraConsistency;
  /** Consistency of the Paxos phase of the compare-and-sets. @default 'LOCAL_SERIAL' */
  serialConsistency?: 'SERIAL' | 'LOCAL_SERIAL';
  /** Create the keyspace and tables when missing. @default true */
  createSchema?: boolean;
  /** Plain-text credentials, if the cluster wants them. */
  credentials?: { username: string; password: string };
  /** Deadline of one request, in ms. @default 12000 */
  requestTimeoutMs?: number;
  /** Deadline of connecting, in ms. @default 10000 */
  connectTimeoutMs?: number;
}

const CONSISTENCIES = ['ANY', 'ONE', 'TWO', 'THREE', 'QUORUM', 'ALL', 'LOCAL_QUORUM', 'EACH_QUORUM', 'LOCAL_ONE'];

/** Checks the connection options. @throws InvalidArgumentError naming the option */
export function checkConnectionOptions(o: CassandraConnectionOptions): void {
  if (!o || !Array.isArray(o.contactPoints) || o.contactPoints.length === 0 || o.contactPoints.some((p) => typeof p !== 'string' || p.length === 0)) {
    throw new InvalidArgumentError('contactPoints must be a non-empty array of "host" or "host:port" strings');
  }
  if (typeof o.keyspace !== 'string' || !KEYSPACE_PATTERN.test(o.keyspace)) throw new InvalidArgumentError(`keyspace is ${JSON.stringify(o.keyspace)}; it must be 1 to 48 of [A-Za-z0-9_]`);
  if (o.consistency !== undefined && !CONSISTENCIES.includes(o.consistency))
    throw new InvalidArgumentError(`consistency is ${JSON.stringify(o.consistency)}; it must be one of ${CONSISTENCIES.join(', ')}`);
  if (o.serialConsistency !== undefined && o.serialConsistency !== 'SERIAL' && o.serialConsistency !== 'LOCAL_SERIAL') {
    throw new InvalidArgumentError(`serialConsistency is ${JSON.stringify(o.serialConsistency)}; it must be SERIAL or LOCAL_SERIAL`);
  }
  if (o.replication !== undefined && (o.replication === null || typeof o.replication !== 'object' || typeof o.replication.class !== 'string')) {
    throw new InvalidArgumentError('replication must be an object with a "class" (e.g. { class: "SimpleStrategy", replication_factor: 1 })');
  }
  for (const name of ['requestTimeoutMs', 'connectTimeoutMs'] as const) {
    const v = o[name];
    if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > 600_000)) throw new InvalidArgumentError(`${name} is ${v}; it must be an integer from 1 to 600000`);
  }
}

type Row = Cassandra.types.Row;

/** `LOCAL_QUORUM` → the driver's `localQuorum`. */
function consistencyKey(name: CassandraConsistency): keyof typeof Cassandra.types.consistencies {
  return name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof typeof Cassandra.types.consistencies;
}

/** The archive backend on Cassandra; see the module comment. */
export class CassandraArchiveBackend implements ArchiveBackend {
  readonly sizes: BackendSizes = {
    indexEntry: () => 8 + 16 + 4,
    pendingEntry: (stored) => stored,
    block: (stored) => stored + Math.ceil(stored / PART_BYTES) * 8 + 4,
    page: (title, state) => Buffer.byteLength(title, 'utf8') * 2 + 8 + JSON.stringify(state).length,
  };
  private readonly q: ReturnType<typeof statements>;
  private client: Cassandra.Client | undefined;
  private connecting: Promise<Cassandra.Client> | undefined;

  constructor(private readonly options: CassandraConnectionOptions) {
    checkConnectionOptions(options);
    this.q = statements(options.keyspace);
  }

  /** Where the archive lives, for messages. */
  get description(): string {
    return `Cassandra ${this.options.contactPoints.join(',')} keyspace ${this.options.keyspace}`;
  }

  private connect(): Promise<Cassandra.Client> {
    this.connecting ??= (async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const driver = require('cassandra-driver') as typeof Cassandra;
      const o = this.options;
      const { consistencies } = driver.types;
      const client = new driver.Client({
        contactPoints: o.contactPoints,
        localDataCenter: o.localDataCenter ?? 'datacenter1',
        ...(o.credentials ? { credentials: o.credentials } : {}),
        socketOptions: { connectTimeout: o.connectTimeoutMs ?? 10_000, readTimeout: o.requestTimeoutMs ?? 12_000 },
        queryOptions: {
          prepare: true,
          consistency: consistencies[consistencyKey(o.consistency ?? 'LOCAL_QUORUM')] as number,
          serialConsistency: o.serialConsistency === 'SERIAL' ? consistencies.serial : consistencies.localSerial,
        },
      });
      try {
        await client.connect();
        if (o.createSchema ?? true) {
          for (const cql of schemaStatements(o.keyspace, o.replication ?? { class: 'SimpleStrategy', replication_factor: 1 })) await client.execute(cql, [], { prepare: false });
        }
      } catch (err) {
        await client.shutdown().catch(() => undefined);
        throw this.wrap(err, 'connect');
      }
      this.client = client;
      return client;
    })();
    this.connecting.catch(() => (this.connecting = undefined));
    return this.connecting;
  }

  /** Driver errors as the client's: unreachable or timed out → UnavailableError, the rest → ServiceError. */
  private wrap(err: unknown, what: string): Error {
    if (err instanceof InvalidArgumentError || err instanceof ArchiveCorruptedError) return err;
    const e = err as { name?: string; code?: number; message?: string };
    const unavailable =
      e?.name === 'NoHostAvailableError' || e?.name === 'OperationTimedOutError' || e?.name === 'BusyConnectionError' || [0x1000, 0x1001, 0x1002, 0x1100, 0x1200].includes(e?.code ?? -1);
    const message = `${this.description}: ${what} failed: ${e?.message ?? String(err)}`;
    return unavailable ? new UnavailableError(message, { cause: err, maybeApplied: what.startsWith('commit') }) : new ServiceError(message, { cause: err });
  }

  private async run(what: string, cql: string, params: unknown[]): Promise<Cassandra.types.ResultSet> {
    const client = this.client ?? (await this.connect());
    try {
      return await client.execute(cql, params, { prepare: true });
    } catch (err) {
      throw this.wrap(err, what);
    }
  }

  /** A conditional batch; false when its condition failed or its outcome is unknown (the caller reads again). */
  private async cas(what: string, queries: { query: string; params: unknown[] }[]): Promise<boolean> {
    const client = this.client ?? (await this.connect());
    try {
      const result = queries.length === 1 ? await client.execute(queries[0].query, queries[0].params, { prepare: true }) : await client.batch(queries, { prepare: true });
      return result.wasApplied();
    } catch (err) {
      // A Paxos write that timed out may or may not have been applied: reading the page again tells.
      if ((err as { code?: number })?.code === 0x1100) return false;
      throw this.wrap(err, what);
    }
  }

  private parseState(title: string, row: Row | undefined): PageSnapshot {
    if (!row || row.get('version') === null) return { state: emptyPageState(), token: null };
    try {
      return { state: { ...emptyPageState(), ...JSON.parse(row.get('state') as string) }, token: String(row.get('version')) };
    } catch (err) {
      throw new ArchiveCorruptedError(title, -1, "the page's metadata is not JSON", { cause: err });
    }
  }

  async readState(title: string): Promise<PageSnapshot> {
    return this.parseState(title, (await this.run('read page', this.q.readState, [title])).first());
  }

  async existing(title: string, records: readonly EncodedRecord[]): Promise<Set<string>> {
    const wanted = new Set(records.map((r) => r.id));
    const revs = [...new Set(records.map((r) => r.rev))];
    const found = new Set<string>();
    for (const row of (await this.run('read index', this.q.existing, [title, revs])).rows) {
      const id = revisionId(Number(String(row.get('rev'))), row.get('tid').toString());
      if (wanted.has(id)) found.add(id);
    }
    return found;
  }

  private casState(query: string, snap: PageSnapshot, next: PageState, extra: unknown[]): { query: string; params: unknown[] } {
    const version = snap.token === null ? 1 : Number(snap.token) + 1;
    return { query, params: [version, JSON.stringify(next), ...extra] };
  }

  async commitAppend(title: string, snap: PageSnapshot, next: PageState, block: number, entries: readonly AppendEntry[]): Promise<boolean> {
    const ids = entries.map((e) => e.record.id);
    const first = snap.token === null;
    const cas = this.casState(first ? this.q.casFirst : this.q.casAppend, snap, next, first ? [ids, title] : [ids, title, Number(snap.token)]);
    const rows = entries.map((e) => ({ query: this.q.insertIndex, params: [title, e.record.rev, e.record.tid, block, e.pending] }));
    return this.cas('commit append', [cas, ...rows]);
  }

  /** The open block's pending renders (ids) and the generation of its committed image, as the page's static row has them. */
  private async openKeys(title: string): Promise<{ version: string | null; ids: string[]; imageGen: number | null }> {
    const row = (await this.run('read open block', this.q.readOpenKeys, [title])).first();
    const gen = row?.get('image_gen');
    return { version: row?.get('version') == null ? null : String(row.get('version')), ids: (row?.get('open_keys') as string[] | null) ?? [], imageGen: gen == null ? null : Number(String(gen)) };
  }

  /** The parts of one generation of a block, joined; null when there are none. */
  private async readGeneration(title: string, block: number, gen: number): Promise<Buffer | null> {
    const rows = (await this.run('read block', this.q.readGen, [title, block, gen])).rows;
    return rows.length ? this.joinParts(title, block, rows) : null;
  }

  private joinParts(title: string, block: number, rows: Row[]): Buffer {
    rows.sort((a, b) => (a.get('part') as number) - (b.get('part') as number));
    if (rows.some((r, i) => r.get('part') !== i)) throw new ArchiveCorruptedError(title, block, 'its parts are not numbered 0, 1, 2, …');
    return Buffer.concat(rows.map((r) => r.get('data') as Buffer));
  }

  async readOpen(title: string, block: number): Promise<OpenContent> {
    const open = await this.openKeys(title);
    const wanted = new Set(open.ids);
    const revs = [...new Set(open.ids.map((id) => Number(id.slice(0, id.indexOf('/')))))];
    const pending: Buffer[] = [];
    if (revs.length) {
      for (const row of (await this.run('read pending', this.q.readPendingOf, [title, revs])).rows) {
        const data = row.get('pending') as Buffer | null;
        if (data && wanted.has(revisionId(Number(String(row.get('rev'))), row.get('tid').toString()))) pending.push(data);
      }
    }
    const image = open.imageGen === null ? null : await this.readGeneration(title, block, open.imageGen);
    return { image, pending };
  }

  /** The statements that clear the pending renders of the open block (their bodies now compressed). */
  private async clearPending(title: string): Promise<{ query: string; params: unknown[] }[]> {
    return (await this.openKeys(title)).ids.map((id) => {
      const slash = id.indexOf('/');
      return { query: this.q.clearPending, params: [title, Number(id.slice(0, slash)), id.slice(slash + 1)] };
    });
  }

  /** Writes the parts of one generation of a block in one batch of its partition; with `once`, only if part 0 is absent. */
  private async writeParts(title: string, block: number, gen: number, stored: Buffer, once: boolean): Promise<void> {
    const parts = chunk(stored, PART_BYTES);
    const queries = parts.map((data, i) => ({ query: i === 0 && once ? this.q.insertFirstPart : this.q.insertPart, params: [title, block, gen, i, data] }));
    if (once) await this.cas('commit block', queries);
    else await this.batch('write image', queries);
  }

  private async batch(what: string, queries: { query: string; params: unknown[] }[]): Promise<void> {
    const client = this.client ?? (await this.connect());
    try {
      await client.batch(queries, { prepare: true, logged: false });
    } catch (err) {
      throw this.wrap(err, what);
    }
  }

  async commitImage(title: string, snap: PageSnapshot, next: PageState, block: number, image: Buffer): Promise<boolean> {
    // The image is written under the version this compare-and-set would give the page, then committed by it.
    const gen = Number(snap.token) + 1;
    await this.writeParts(title, block, gen, image, false);
    const applied = await this.cas('commit image', [this.casState(this.q.casImage, snap, next, [gen, title, Number(snap.token)]), ...(await this.clearPending(title))]);
    await this.run('drop images', this.q[applied ? 'deleteImagesBelow' : 'deleteImage'], [title, block, gen]);
    return applied;
  }

  async commitSeal(title: string, snap: PageSnapshot, next: PageState, block: number, sealed: Buffer): Promise<boolean> {
    // Written once (generation 0): when another handle wrote this block first, its parts (the same renders) stay.
    await this.writeParts(title, block, 0, sealed, true);
    const applied = await this.cas('commit seal', [this.casState(this.q.casSeal, snap, next, [title, Number(snap.token)]), ...(await this.clearPending(title))]);
    if (applied) await this.run('drop images', this.q.deleteImages, [title, block]);
    return applied;
  }

  async lookup(title: string, rev: number, tid?: string): Promise<IndexHit | null> {
    const rs = tid === undefined ? await this.run('look up', this.q.lookupLatest, [title, rev]) : await this.run('look up', this.q.lookupExact, [title, rev, tid]);
    const row = rs.first();
    if (!row) return null;
    // A render of an open block comes with its body: no second read.
    const pending = row.get('pending') as Buffer | null;
    return { rev: Number(String(row.get('rev'))), tid: row.get('tid').toString(), block: row.get('block') as number, ...(pending ? { pending } : {}) };
  }

  async readContent(title: string, hit: IndexHit): Promise<StoredContent | null> {
    const rows = (await this.run('read block', this.q.readBlock, [title, hit.block])).rows;
    const byGen = new Map<number, Row[]>();
    for (const row of rows) {
      const gen = Number(String(row.get('gen')));
      byGen.set(gen, [...(byGen.get(gen) ?? []), row]);
    }
    if (byGen.has(0)) return { kind: 'sealed', stored: this.joinParts(title, hit.block, byGen.get(0)!) };
    // The lookup found the render no longer pending (an index row and its body are written together, and a
    // body is cleared only by the commit of an image or a seal that holds it); the newest image written holds every
    // render the committed one does.
    const newest = Math.max(...byGen.keys());
    return byGen.size ? { kind: 'image', stored: this.joinParts(title, hit.block, byGen.get(newest)!) } : null;
  }

  async *pages(): AsyncIterable<{ title: string; state: PageState }> {
    const client = this.client ?? (await this.connect());
    let pageState: string | undefined;
    do {
      let rs: Cassandra.types.ResultSet;
      try {
        rs = await client.execute(this.q.pages, [], { prepare: true, fetchSize: 500, ...(pageState ? { pageState } : {}) });
      } catch (err) {
        throw this.wrap(err, 'list pages');
      }
      for (const row of rs.rows) {
        const title = row.get('page') as string;
        yield { title, state: this.parseState(title, row).state };
      }
      pageState = rs.pageState ?? undefined;
    } while (pageState);
  }

  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = undefined;
    this.client = undefined;
    const client = await connecting?.catch(() => undefined);
    await client?.shutdown();
  }
}
