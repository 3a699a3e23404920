/**
 * Apache Cassandra through `cassandra-driver`, on a Cassandra that scripts/cassandra.sh starts for the
 * benchmark: an instance of its own (.cassandra/bench, CQL on 127.0.0.1:19042, sharing the tests'
 * Maven repository) whose commit log is synced before a write is acknowledged (`commitlog_sync: batch`,
 * or `group` with KVT_BENCH_CASSANDRA_COMMITLOG_SYNC), so its figures are durable as kvt's are. The
 * archive tests' own Cassandra (periodic sync, port 9042) is never touched. The peer reads the mode
 * back from the server (system_views.settings) and refuses a Cassandra that syncs periodically.
 *
 * Family-less keys are rows of `kv (k PRIMARY KEY, v)`; a key family is a partition of
 * `fam ((f), k, v)` with the key as clustering column, so a batch of one family (W4) is a
 * single-partition batch (atomic and isolated) and a family's scan (W5) reads one partition in
 * clustering order. The conditional write of W3 is a lightweight transaction (Paxos v2, which
 * Cassandra 5.0 recommends for new clusters): `INSERT … IF NOT EXISTS`, or `UPDATE … IF v = ?` with
 * the value read as the version (the design; values repeat across a pool of 1,024, so a stale
 * read that meets an equal value would win, rarely). A Paxos round that times out under contention
 * (its outcome unknown) counts as a lost condition, so W3 re-reads and retries, as an application would.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as Cassandra from 'cassandra-driver';
import { BatchEntry, JVM_IDLE_CAP_MS, Peer, VersionedValue, repoRoot } from './peer';

/** A first start resolves Cassandra with Maven (shared with the tests' download when there is one). */
const START_TIMEOUT_MS = 15 * 60_000;
/** Each peer's keyspace is its own (a test may share the server with a run), dropped on close. */
const KEYSPACE_PREFIX = 'kvt_bench';
/** Rows per page of a family scan (kvt's peer reads 1,000 a page too). */
const SCAN_PAGE = 1000;

/** The commit log modes that acknowledge a write only once it is synced. */
export type DurableCommitLog = 'batch' | 'group';

/** Where the benchmark's Cassandra runs and how (the environment of scripts/cassandra.sh). */
export interface BenchCassandraSettings {
  home: string;
  cqlPort: number;
  storagePort: number;
  jmxPort: number;
  commitLogSync: DurableCommitLog;
  /** Group mode's window in ms. */
  groupWindowMs: number;
}

/**
 * The benchmark's Cassandra: KVT_BENCH_CASSANDRA_PORT (CQL, 19042), _STORAGE_PORT (17000), _JMX_PORT (17199),
 * KVT_BENCH_CASSANDRA_COMMITLOG_SYNC (batch), KVT_BENCH_CASSANDRA_GROUP_WINDOW_MS (group mode's window, 2).
 */
export function benchCassandraSettings(env = process.env): BenchCassandraSettings {
  const mode = env.KVT_BENCH_CASSANDRA_COMMITLOG_SYNC ?? 'batch';
  if (mode !== 'batch' && mode !== 'group') throw new Error(`KVT_BENCH_CASSANDRA_COMMITLOG_SYNC is "${mode}"; the benchmark runs Cassandra durable: batch or group`);
  return {
    home: path.join(repoRoot(), '.cassandra', 'bench'),
    cqlPort: Number(env.KVT_BENCH_CASSANDRA_PORT ?? 19042),
    storagePort: Number(env.KVT_BENCH_CASSANDRA_STORAGE_PORT ?? 17000),
    jmxPort: Number(env.KVT_BENCH_CASSANDRA_JMX_PORT ?? 17199),
    commitLogSync: mode,
    groupWindowMs: Number(env.KVT_BENCH_CASSANDRA_GROUP_WINDOW_MS ?? 2),
  };
}

/** The environment scripts/cassandra.sh gets for the benchmark's instance. */
function scriptEnv(s: BenchCassandraSettings): NodeJS.ProcessEnv {
  return {
    ...process.env,
    KVT_CASSANDRA_HOME: s.home,
    KVT_CASSANDRA_M2: path.join(process.env.KVT_CASSANDRA_HOME ?? path.join(repoRoot(), '.cassandra'), 'm2'),
    KVT_CASSANDRA_PORT: String(s.cqlPort),
    KVT_CASSANDRA_STORAGE_PORT: String(s.storagePort),
    KVT_CASSANDRA_JMX_PORT: String(s.jmxPort),
    KVT_CASSANDRA_COMMITLOG_SYNC: s.commitLogSync,
    KVT_CASSANDRA_COMMITLOG_GROUP_WINDOW_MS: String(s.groupWindowMs),
    KVT_CASSANDRA_PAXOS_VARIANT: 'v2',
  };
}

/** Runs scripts/cassandra.sh `command` for the benchmark's instance; resolves its exit status and last line. */
function cassandraScript(command: string, s: BenchCassandraSettings, timeoutMs: number): Promise<{ status: number | null; line: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [path.join(repoRoot(), 'scripts', 'cassandra.sh'), command], { env: scriptEnv(s), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, line: out.trim().split('\n').pop() ?? '' });
    });
  });
}

/** A running Cassandra for the benchmark. */
export interface CassandraServer {
  readonly contactPoint: string;
  readonly pid: number;
  readonly settings: BenchCassandraSettings;
  /** Stops the server if this process started it. */
  stop(): Promise<void>;
}

/** Starts the benchmark's Cassandra (scripts/cassandra.sh start) unless it already runs. */
export async function startBenchCassandra(log: (line: string) => void = () => undefined, settings = benchCassandraSettings()): Promise<CassandraServer> {
  const already = (await cassandraScript('status', settings, 10_000)).status === 0;
  if (!already) {
    log(`cassandra: starting the benchmark's Cassandra (commitlog_sync ${settings.commitLogSync}, scripts/cassandra.sh start)…`);
    const r = await cassandraScript('start', settings, START_TIMEOUT_MS);
    if (r.status !== 0) throw new Error(`scripts/cassandra.sh start failed: ${r.line}`);
    log(r.line);
  }
  const pidFile = path.join(settings.home, 'cassandra.pid');
  if (!fs.existsSync(pidFile)) throw new Error(`a Cassandra that scripts/cassandra.sh did not start answers on 127.0.0.1:${settings.cqlPort}: its CPU cannot be read; stop it`);
  return {
    contactPoint: `127.0.0.1:${settings.cqlPort}`,
    pid: Number(fs.readFileSync(pidFile, 'utf8').trim()),
    settings,
    async stop() {
      if (!already) await cassandraScript('stop', settings, 120_000);
    },
  };
}

const CQL = {
  put: 'INSERT INTO kv (k, v) VALUES (?, ?)',
  get: 'SELECT v FROM kv WHERE k = ?',
  insertIfAbsent: 'INSERT INTO kv (k, v) VALUES (?, ?) IF NOT EXISTS',
  replaceIf: 'UPDATE kv SET v = ? WHERE k = ? IF v = ?',
  putInFamily: 'INSERT INTO fam (f, k, v) VALUES (?, ?, ?)',
  getInFamily: 'SELECT v FROM fam WHERE f = ? AND k = ?',
  scan: 'SELECT k, v FROM fam WHERE f = ?',
} as const;

/** Options of {@link CassandraPeer.start}. */
export interface CassandraPeerOptions {
  log?: (line: string) => void;
  settings?: BenchCassandraSettings;
}

/** Cassandra through cassandra-driver, prepared statements, LOCAL_ONE (one node) and LOCAL_SERIAL for LWTs. */
export class CassandraPeer implements Peer {
  readonly name = 'cassandra' as const;
  readonly cpu;
  /** Lightweight transactions that timed out under contention (counted as lost conditions). */
  paxosTimeouts = 0;

  private constructor(
    private readonly client: Cassandra.Client,
    private readonly server: CassandraServer,
    private readonly keyspace: string,
    /** The commit log mode the server reported. */
    readonly commitLogSync: string,
  ) {
    this.cpu = { kind: 'pids', pids: () => [server.pid], idleCapMs: JVM_IDLE_CAP_MS } as const;
  }

  /** Starts the server (unless running), checks that it syncs its commit log, and creates a fresh keyspace. */
  static async start(options: CassandraPeerOptions = {}): Promise<CassandraPeer> {
    const server = await startBenchCassandra(options.log, options.settings);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when this peer runs, as the archive does
    const driver = require('cassandra-driver') as typeof Cassandra;
    const client = new driver.Client({
      contactPoints: [server.contactPoint],
      localDataCenter: 'datacenter1',
      queryOptions: { consistency: driver.types.consistencies.localOne, serialConsistency: driver.types.consistencies.localSerial, prepare: true },
    });
    try {
      await client.connect();
      const mode = (await client.execute("SELECT value FROM system_views.settings WHERE name = 'commitlog_sync'")).first()?.get('value') as string | undefined;
      if (mode !== 'batch' && mode !== 'group') {
        throw new Error(
          `the Cassandra on ${server.contactPoint} runs commitlog_sync ${mode ?? 'unknown'}, which acknowledges writes before they are synced; stop it (KVT_CASSANDRA_HOME=${server.settings.home} scripts/cassandra.sh stop)`,
        );
      }
      const keyspace = `${KEYSPACE_PREFIX}_${process.pid}_${Date.now()}`;
      await client.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = true`);
      await client.execute(`CREATE TABLE ${keyspace}.kv (k text PRIMARY KEY, v blob)`);
      await client.execute(`CREATE TABLE ${keyspace}.fam (f text, k text, v blob, PRIMARY KEY ((f), k)) WITH CLUSTERING ORDER BY (k ASC)`);
      await client.execute(`USE ${keyspace}`);
      return new CassandraPeer(client, server, keyspace, mode);
    } catch (err) {
      await client.shutdown().catch(() => undefined);
      await server.stop();
      throw err;
    }
  }

  async put(key: string, value: Buffer): Promise<void> {
    await this.client.execute(CQL.put, [key, value]);
  }

  async get(key: string): Promise<Buffer | null> {
    return ((await this.client.execute(CQL.get, [key])).first()?.get('v') as Buffer | undefined) ?? null;
  }

  async getVersioned(key: string): Promise<VersionedValue> {
    const value = await this.get(key);
    return value === null ? { value: null, version: null } : { value, version: value.toString('base64') };
  }

  async replaceIf(key: string, value: Buffer, version: string | null): Promise<boolean> {
    try {
      const r = version === null ? await this.client.execute(CQL.insertIfAbsent, [key, value]) : await this.client.execute(CQL.replaceIf, [value, key, Buffer.from(version, 'base64')]);
      return r.wasApplied();
    } catch (err) {
      if (!isPaxosTimeout(err)) throw err;
      this.paxosTimeouts++;
      return false;
    }
  }

  async putBatch(family: string, entries: BatchEntry[]): Promise<void> {
    await this.client.batch(
      entries.map((e) => ({ query: CQL.putInFamily, params: [family, e.key, e.value] })),
      { logged: false },
    );
  }

  async putInFamily(family: string, key: string, value: Buffer): Promise<void> {
    await this.client.execute(CQL.putInFamily, [family, key, value]);
  }

  /** Loading only: an unlogged batch over many partitions (not atomic, which loading does not need). */
  async putMany(entries: BatchEntry[]): Promise<void> {
    await this.client.batch(
      entries.map((e) => ({ query: CQL.put, params: [e.key, e.value] })),
      { logged: false },
    );
  }

  async getInFamily(family: string, key: string): Promise<Buffer | null> {
    return ((await this.client.execute(CQL.getInFamily, [family, key])).first()?.get('v') as Buffer | undefined) ?? null;
  }

  async scanFamily(family: string): Promise<number> {
    let n = 0;
    let pageState: string | undefined;
    do {
      const page = await this.client.execute(CQL.scan, [family], { fetchSize: SCAN_PAGE, pageState });
      n += page.rowLength;
      pageState = page.pageState ?? undefined;
    } while (pageState);
    return n;
  }

  async close(): Promise<void> {
    await this.client.execute(`DROP KEYSPACE IF EXISTS ${this.keyspace}`).catch(() => undefined);
    await this.client.shutdown().catch(() => undefined);
    await this.server.stop();
  }
}

/** Consistency levels of a Paxos round in cassandra-driver's codes (SERIAL, LOCAL_SERIAL). */
const SERIAL_CONSISTENCIES = [8, 9];

/** A timeout of a lightweight transaction's Paxos round: a write timeout of type CAS, or a timeout at a serial consistency. */
function isPaxosTimeout(err: unknown): boolean {
  const e = err as { name?: string; writeType?: string; consistencies?: number };
  return err instanceof Error && e.name === 'ResponseError' && (e.writeType === 'CAS' || SERIAL_CONSISTENCIES.includes(e.consistencies ?? -1));
}
