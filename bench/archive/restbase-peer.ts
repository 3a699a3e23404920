/**
 * The peer: the same history stored the way RESTBase stores revisions, one Cassandra row per
 * revision in a `key_rev_value` table (the schema of RESTBase's sys/key_rev_value.js: key, rev, tid,
 * latestTid, value, content-type, content-sha256, content-location, tags; PRIMARY KEY ((key), rev,
 * tid), newest first) with Cassandra's own deflate table compression in 256 KiB chunks, RESTBase's
 * default. Its size is read from the data directory after `nodetool flush`.
 */
import { createHash } from 'node:crypto';
import type * as Cassandra from 'cassandra-driver';
import type { TextRender } from './data';

/** The peer's keyspace and table. */
export function restbaseSchema(keyspace: string): string[] {
  return [
    `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
    `CREATE TABLE IF NOT EXISTS ${keyspace}.key_rev_value (
       key text, rev int, tid timeuuid, "latestTid" timeuuid static, value blob,
       "content-type" text, "content-sha256" blob, "content-location" text, tags set<text>,
       PRIMARY KEY ((key), rev, tid)
     ) WITH CLUSTERING ORDER BY (rev DESC, tid DESC)
       AND compression = {'class': 'DeflateCompressor', 'chunk_length_in_kb': 256}`,
  ];
}

/** Writes every render as one row (at most `concurrency` at once), reporting progress. */
export async function loadRestbasePeer(client: Cassandra.Client, keyspace: string, renders: TextRender[], progress: (done: number) => void, concurrency = 16): Promise<void> {
  for (const cql of restbaseSchema(keyspace)) await client.execute(cql);
  const insert = `INSERT INTO ${keyspace}.key_rev_value (key, rev, tid, "latestTid", value, "content-type", "content-sha256") VALUES (?, ?, ?, ?, ?, ?, ?)`;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < renders.length) {
      const r = renders[next++];
      const value = Buffer.from(r.value, 'utf8');
      const sha = createHash('sha256').update(value).digest();
      await client.execute(insert, [r.title, r.rev, r.tid, r.tid, value, r.headers['content-type'], sha], { prepare: true });
      if (next % 500 === 0) progress(next);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  progress(renders.length);
}
