/**
 * The archive tier (DESIGN §4, §7): page histories in compressed blocks, on a kvt table
 * ({@link KvtArchiveStore}) or on Apache Cassandra ({@link CassandraArchiveStore}).
 */
export type { ArchiveStore, ArchivedRender, ArchivedRenderRead, ArchiveAppendResult, ArchiveLocation, ArchiveStats, ArchiveStoreOptions } from './archive-store';
export { defaultArchiveStoreOptions } from './archive-store';
export { ArchiveCorruptedError } from './archive-errors';
export { KvtArchiveStore } from './kvt-archive-store';
export type { KvtArchiveStoreOptions } from './kvt-archive-store';
export { CassandraArchiveStore } from './cassandra-archive-store';
export type { CassandraArchiveStoreOptions } from './cassandra-archive-store';
export type { CassandraConnectionOptions, CassandraConsistency } from './cassandra-archive-backend';
export { MAX_ARCHIVED_REV, MAX_ARCHIVED_RENDER_BYTES } from './render-validation';
