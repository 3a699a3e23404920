/**
 * The archive's tables in Cassandra (source document 003: a metadata table and a block table), and
 * the statements the backend prepares.
 *
 * - `archive_index`, one partition per page: a skinny row per render, (rev, tid) → block, newest
 *   first, holding the render itself (`pending`) while its block is open and uncompressed; and, as
 *   static columns, the page's metadata (`state`, JSON), the compare-and-set token (`version`), the
 *   open block's pending renders (`open_keys`) and the generation of its committed image. The static
 *   row stays small (no bodies), so reading it is cheap; rows are never deleted or rewritten, only a
 *   render's `pending` cell is cleared once its block is compressed.
 * - `archive_blocks`, one partition per (page, block), so no partition grows without bound: the
 *   sealed block (`gen` 0) or images of the open block (`gen` > 0, the version that wrote them), in
 *   parts of at most 1 MiB. Cassandra's own compression is off for it: the parts are brotli streams.
 */

/** Checks a keyspace name (Cassandra's identifier rule); the name is then quoted as given. */
export const KEYSPACE_PATTERN = /^[A-Za-z0-9_]{1,48}$/;

/** The CQL that creates the keyspace and tables (idempotent). */
export function schemaStatements(keyspace: string, replication: Record<string, string | number>): string[] {
  const ks = `"${keyspace}"`;
  const map = Object.entries(replication)
    .map(([k, v]) => `'${k.replace(/'/g, "''")}': '${String(v).replace(/'/g, "''")}'`)
    .join(', ');
  return [
    `CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = {${map}}`,
    `CREATE TABLE IF NOT EXISTS ${ks}.archive_index (
       page text, rev bigint, tid timeuuid, block int, pending blob,
       version bigint static, state text static, open_keys set<text> static, image_gen bigint static,
       PRIMARY KEY ((page), rev, tid)
     ) WITH CLUSTERING ORDER BY (rev DESC, tid DESC)`,
    `CREATE TABLE IF NOT EXISTS ${ks}.archive_blocks (
       page text, block int, gen bigint, part int, data blob,
       PRIMARY KEY ((page, block), gen, part)
     ) WITH compression = {'enabled': 'false'}`,
  ];
}

/** The statements of the backend, on the keyspace. */
export function statements(keyspace: string) {
  const ix = `"${keyspace}".archive_index`;
  const bl = `"${keyspace}".archive_blocks`;
  return {
    readState: `SELECT version, state FROM ${ix} WHERE page = ? LIMIT 1`,
    readOpenKeys: `SELECT version, open_keys, image_gen FROM ${ix} WHERE page = ? LIMIT 1`,
    existing: `SELECT rev, tid FROM ${ix} WHERE page = ? AND rev IN ?`,
    // The compare-and-set of a page: `version` moves by one with every change of the page.
    casFirst: `UPDATE ${ix} SET version = ?, state = ?, open_keys = open_keys + ? WHERE page = ? IF version = null`,
    casAppend: `UPDATE ${ix} SET version = ?, state = ?, open_keys = open_keys + ? WHERE page = ? IF version = ?`,
    insertIndex: `INSERT INTO ${ix} (page, rev, tid, block, pending) VALUES (?, ?, ?, ?, ?)`,
    readPendingOf: `SELECT rev, tid, pending FROM ${ix} WHERE page = ? AND rev IN ?`,
    casImage: `UPDATE ${ix} SET version = ?, state = ?, image_gen = ?, open_keys = null WHERE page = ? IF version = ?`,
    casSeal: `UPDATE ${ix} SET version = ?, state = ?, image_gen = null, open_keys = null WHERE page = ? IF version = ?`,
    clearPending: `UPDATE ${ix} SET pending = null WHERE page = ? AND rev = ? AND tid = ?`,
    insertFirstPart: `INSERT INTO ${bl} (page, block, gen, part, data) VALUES (?, ?, ?, ?, ?) IF NOT EXISTS`,
    insertPart: `INSERT INTO ${bl} (page, block, gen, part, data) VALUES (?, ?, ?, ?, ?)`,
    deleteImagesBelow: `DELETE FROM ${bl} WHERE page = ? AND block = ? AND gen > 0 AND gen < ?`,
    deleteImage: `DELETE FROM ${bl} WHERE page = ? AND block = ? AND gen = ?`,
    deleteImages: `DELETE FROM ${bl} WHERE page = ? AND block = ? AND gen > 0`,
    lookupExact: `SELECT rev, tid, block, pending FROM ${ix} WHERE page = ? AND rev = ? AND tid = ?`,
    lookupLatest: `SELECT rev, tid, block, pending FROM ${ix} WHERE page = ? AND rev = ? LIMIT 1`,
    readBlock: `SELECT gen, part, data FROM ${bl} WHERE page = ? AND block = ?`,
    readGen: `SELECT part, data FROM ${bl} WHERE page = ? AND block = ? AND gen = ?`,
    pages: `SELECT DISTINCT page, version, state FROM ${ix}`,
  };
}
