/**
 * The archive conformance suite against CassandraArchiveStore on a real Apache Cassandra, started by
 * scripts/cassandra.sh (test/harness/cassandra-global-setup.ts starts it when it is not running, or
 * `.ci/run` did). One keyspace per case, dropped at the end; the restart case stops and starts
 * Cassandra with the script. Without Cassandra the suite fails with one line; only
 * KVT_SKIP_CASSANDRA=1 skips it.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type * as Cassandra from 'cassandra-driver';
import { describe, inject, it } from 'vitest';
import { CassandraArchiveStore } from '../../client';
import { REPO_ROOT } from '../harness/process';
import { archiveConformance } from '../suites/archive-conformance';
import { ArchiveTarget, damageBytes } from '../suites/archive-context';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const driver = require('cassandra-driver') as typeof Cassandra;
const SCRIPT = path.join(REPO_ROOT, 'scripts', 'cassandra.sh');

function cassandraScript(command: string): void {
  const r = spawnSync('bash', [SCRIPT, command], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`scripts/cassandra.sh ${command}: ${(r.stderr || r.stdout).trim()}`);
}

async function cassandraTarget(contactPoint: string): Promise<ArchiveTarget> {
  const client = () => new driver.Client({ contactPoints: [contactPoint], localDataCenter: 'datacenter1' });
  let admin = client();
  await admin.connect();
  const keyspaces: string[] = [];
  return {
    async space() {
      const keyspace = `kvt_archive_test_${process.pid}_${keyspaces.length + 1}`;
      keyspaces.push(keyspace);
      // The first handle creates the keyspace and tables; the damage below needs them.
      const first = new CassandraArchiveStore({ contactPoints: [contactPoint], keyspace });
      await first.stats();
      await first.close();
      return {
        open: (options) => new CassandraArchiveStore({ contactPoints: [contactPoint], keyspace, ...options }),
        async damageBlock(title, block, damage) {
          const table = `"${keyspace}".archive_blocks`;
          const row = (await admin.execute(`SELECT data FROM ${table} WHERE page = ? AND block = ? AND gen = 0 AND part = 0`, [title, block], { prepare: true })).first();
          if (!row) throw new Error(`no block ${block} of ${title}`);
          await admin.execute(`UPDATE ${table} SET data = ? WHERE page = ? AND block = ? AND gen = 0 AND part = 0`, [damageBytes(row.get('data') as Buffer, damage), title, block], { prepare: true });
        },
        cliArgs: [`cassandra:${contactPoint}/${keyspace}`],
      };
    },
    async restartBackend() {
      await admin.shutdown();
      cassandraScript('stop');
      cassandraScript('start');
      admin = client();
      await admin.connect();
    },
    async dispose() {
      for (const ks of keyspaces) await admin.execute(`DROP KEYSPACE IF EXISTS "${ks}"`);
      await admin.shutdown();
    },
  };
}

const cassandra = inject('cassandra');
if (cassandra?.state === 'ready') {
  archiveConformance('CassandraArchiveStore on a real Cassandra', () => cassandraTarget(cassandra.contactPoint), { processes: true, restart: true });
} else {
  describe('CassandraArchiveStore', () => {
    it('needs a real Cassandra (scripts/cassandra.sh start)', () => {
      // KVT_SKIP_CASSANDRA=1 does not pass this suite: it fails, saying so.
      if (cassandra?.state === 'skipped') throw new Error('KVT_SKIP_CASSANDRA=1: the Cassandra archive suite did not run (it needs a real Cassandra)');
      throw new Error(cassandra?.state === 'failed' ? cassandra.reason : 'Cassandra was not prepared: run the suite through vitest.config.ts (its globalSetup starts Cassandra)');
    });
  });
}
