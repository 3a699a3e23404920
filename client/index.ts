/**
 * kvt client: the only public entry. A partitioned, versioned key-value table service modelled on
 * Pravega's Key-Value Tables (see README.md and DESIGN §2, §7).
 */
export { KeyValueTableManager, checkPartitionCount } from './key-value-table-manager';
export type { KeyValueTableConfiguration, KeyValueTableInfo, KeyValueTableManagerOptions, ReplacedPartition, SegmentStoreDescription, SegmentStoreRemoval } from './key-value-table-manager';
export { partitionOf } from './table-description';
export type { KeyValueTableDescription, KeyValueTableState, PartitionDescription, SegmentContents } from './table-description';
export { KeyValueTableFactory } from './key-value-table-factory';
export type { KeyValueTableConfig } from './key-value-table-factory';
export type { KeyValueTable } from './key-value-table';
export { GrpcKeyValueTable } from './grpc-key-value-table';
export { InMemoryKeyValueTable } from './in-memory-key-value-table';
export type { InMemoryKeyValueTableOptions } from './in-memory-key-value-table';
export type { IteratorItem, IteratorOptions, ScannedEntry, ScanOptions, TableEntry, TableEntryUpdate, TableKey, TableModification, TtlOptions } from './types';
export { Version } from './version';
export { Serializers } from './serializers';
export type { Serializer } from './serializers';
export {
  KvtError,
  ConditionalTableUpdateError,
  BadKeyVersionError,
  NoSuchKeyError,
  InvalidArgumentError,
  ScopeNotFoundError,
  TableNotFoundError,
  TableNotActiveError,
  ObjectClosedError,
  UnavailableError,
  OverloadedError,
  DocumentConflictError,
  UnauthenticatedError,
  PermissionDeniedError,
  ServiceError,
  SegmentStoreNotFoundError,
  SegmentStoreLiveError,
  SegmentStoreHoldsDataError,
  SegmentStoreRemovedError,
} from './errors';
export type { KvtErrorContext } from './errors';
export { defaultClientOptions, defaultKeyValueTableFactoryOptions } from './options';
export type { ClientOptions, ClientTlsOptions, KeyValueTableFactoryOptions, KeyValueTableFactoryInput, KvtLogger, CoalescerOptions, RetryOptions } from './options';
export * from './limits';
export {
  PageRevisionStore,
  RenderExistsError,
  DEFAULT_RECENCY_WINDOW_MS,
  DEFAULT_HISTORICAL_TTL_MS,
  MAX_RENDER_BYTES,
  MAX_RENDER_HEADERS_BYTES,
  MAX_RENDER_PARTS,
  MAX_PART_NAME_LENGTH,
  MAX_LIST_LIMIT,
  isTimeUuid,
  timeOf,
  timeUuidOf,
} from './revisions';
export type { ListRevisionsOptions, PageRevisionStoreOptions, PutRenderOptions, ReadRenderOptions, Render, RenderBody, RenderedRevision, RenderInput, RenderKey, RevisionPage } from './revisions';
export { KvtArchiveStore, CassandraArchiveStore, ArchiveCorruptedError, defaultArchiveStoreOptions, MAX_ARCHIVED_REV, MAX_ARCHIVED_RENDER_BYTES } from './archive';
export type {
  ArchiveStore,
  ArchivedRender,
  ArchivedRenderRead,
  ArchiveAppendResult,
  ArchiveLocation,
  ArchiveStats,
  ArchiveStoreOptions,
  KvtArchiveStoreOptions,
  CassandraArchiveStoreOptions,
  CassandraConnectionOptions,
  CassandraConsistency,
} from './archive';
// The document layer, as client/documents/index.ts lists it.
export * from './documents';
