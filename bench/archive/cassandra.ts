/**
 * The benchmark's Cassandra: the one scripts/cassandra.sh runs (started here when it is not running,
 * and then stopped at the end), `nodetool flush` through the same script, and the size of a
 * keyspace's tables in its data directory.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../peers/peer';

const SCRIPT = path.join(repoRoot(), 'scripts', 'cassandra.sh');
/** Where scripts/cassandra.sh keeps Cassandra's data (its KVT_CASSANDRA_HOME). */
const HOME = process.env.KVT_CASSANDRA_HOME ?? path.join(repoRoot(), '.cassandra');

/** Runs scripts/cassandra.sh; its output, or an Error with its one line. */
export function cassandraScript(args: string[], timeoutMs = 900_000): string {
  const r = spawnSync('bash', [SCRIPT, ...args], { encoding: 'utf8', timeout: timeoutMs });
  if (r.status !== 0) throw new Error(`scripts/cassandra.sh ${args[0]}: ${(r.stderr || r.stdout || `exit ${r.status}`).trim().split('\n').pop()}`);
  return r.stdout.trim();
}

/** A running Cassandra: started here when it was not running (`stop()` then stops it). */
export function ensureCassandra(): { contactPoint: string; stop(): void } {
  const contactPoint = `127.0.0.1:${process.env.KVT_CASSANDRA_PORT ?? '9042'}`;
  const running = spawnSync('bash', [SCRIPT, 'status'], { encoding: 'utf8' }).status === 0;
  if (!running) process.stderr.write(`${cassandraScript(['start'])}\n`);
  return { contactPoint, stop: () => (running ? undefined : void process.stderr.write(`${cassandraScript(['stop'])}\n`)) };
}

/** Flushes the memtables of a keyspace to SSTables (nodetool flush). */
export function flushKeyspace(keyspace: string): void {
  cassandraScript(['nodetool', 'flush', keyspace], 300_000);
}

/** Compacts the tables of a keyspace (nodetool compact): cleared cells merged away. */
export function compactKeyspace(keyspace: string): void {
  cassandraScript(['nodetool', 'compact', keyspace], 600_000);
}

/** Bytes on disk of a keyspace's tables: every SSTable component, and the Data.db files alone. */
export function keyspaceDiskBytes(keyspace: string): { total: number; data: number; byTable: Record<string, number> } {
  const dir = path.join(HOME, 'data', 'data', keyspace);
  const out = { total: 0, data: 0, byTable: {} as Record<string, number> };
  if (!fs.existsSync(dir)) return out;
  for (const tableDir of fs.readdirSync(dir)) {
    const table = tableDir.replace(/-[0-9a-f]{32}$/, '');
    for (const file of fs.readdirSync(path.join(dir, tableDir), { recursive: true }) as string[]) {
      const full = path.join(dir, tableDir, file);
      const st = fs.statSync(full);
      if (!st.isFile()) continue;
      out.total += st.size;
      out.byTable[table] = (out.byTable[table] ?? 0) + st.size;
      if (file.endsWith('-Data.db')) out.data += st.size;
    }
  }
  return out;
}
