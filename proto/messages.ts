/**
 * TypeScript shapes of the `kvt.v1` messages as the loader decodes them (camelCase, uint64 as decimal
 * string, enums as names, bytes as Buffer, defaults filled in). When sending, any field may be
 * omitted and `Uint8Array` is accepted for bytes.
 */

// ---- segment store ----

export type ConditionKind = 'NONE' | 'NOT_EXISTS' | 'VERSION';
export interface Condition {
  kind: ConditionKind;
  segmentId: string;
  sequence: string;
}

export type ModificationType = 'PUT' | 'INSERT' | 'REMOVE' | 'REMOVE_RANGE';
export interface Modification {
  type: ModificationType;
  family: string;
  key: Uint8Array;
  value: Uint8Array;
  condition?: Condition | null;
  ttlMs: string;
  rangeFrom: Uint8Array;
  rangeTo: Uint8Array;
  rangePrefix: Uint8Array;
}

export interface CreateSegmentRequest { segmentId: string; table: string }
export interface CreateSegmentResponse { created: boolean }
export interface DeleteSegmentRequest { segmentId: string }
export interface DeleteSegmentResponse { deleted: boolean }
export interface GetSegmentInfoRequest { segmentId: string }
export interface SegmentInfo {
  segmentId: string;
  entryCount: string;
  bytes: string;
  lastSequence: string;
  table: string;
}
export type ListSegmentsRequest = Record<string, never>;
export interface ListSegmentsResponse { segments: SegmentInfo[] }

export interface UpdateRequest { segmentId: string; modifications: Modification[] }
/** See segmentstore.proto: stores answer `firstSequence`; `sequences` is the earlier form (empty from current stores). */
export interface UpdateResponse { sequences: string[]; firstSequence: string }

export interface KeyRef { family: string; key: Uint8Array }
export interface GetRequest { segmentId: string; keys: KeyRef[] }
export interface Entry { found: boolean; key: Uint8Array; value: Uint8Array; sequence: string }
export interface GetResponse { entries: Entry[] }

export interface IterateRequest {
  segmentId: string;
  family: string;
  includeValues: boolean;
  maxItems: number;
  prefix: Uint8Array;
  from: Uint8Array;
  to: Uint8Array;
  toInclusive: boolean;
  reverse: boolean;
  hasAfter: boolean;
  after: Uint8Array;
}
export interface IterateResponse { items: Entry[]; done: boolean }

export interface ScanRequest { segmentId: string; includeValues: boolean; maxItems: number; after: Uint8Array }
export interface ScanItem { family: string; key: Uint8Array; value: Uint8Array; sequence: string }
export interface ScanResponse { items: ScanItem[]; done: boolean; position: Uint8Array }

export interface SubRequest {
  update?: UpdateRequest | null;
  get?: GetRequest | null;
  /** Set by the loader on decode: which field of the oneof is present. */
  request?: 'update' | 'get';
}
export interface ExecuteRequest { requests: SubRequest[] }
export interface WireError { code: string; message: string; index: number; segmentId: string }
export interface SubResponse {
  update?: UpdateResponse | null;
  get?: GetResponse | null;
  error?: WireError | null;
  /** Set by the loader on decode: which field of the oneof is present. */
  response?: 'update' | 'get' | 'error';
}
export interface ExecuteResponse { responses: SubResponse[] }
export interface ExecuteStreamRequest { id: number; request: ExecuteRequest | null; iterate: IterateRequest | null }
export interface ExecuteStreamResponse { id: number; response: ExecuteResponse | null; error: WireError | null; iterate: IterateResponse | null }

// ---- controller ----

export interface ScopeRequest { scope: string }
export interface CreateScopeResponse { created: boolean }
export interface DeleteScopeResponse { deleted: boolean }
export type ListScopesRequest = Record<string, never>;
export interface ListScopesResponse { scopes: string[] }

export interface TableConfiguration { partitionCount: number }
export interface CreateTableRequest { scope: string; table: string; config?: TableConfiguration | null }
export interface CreateTableResponse { created: boolean }
export interface TableRequest { scope: string; table: string }
export interface UpdateTableRequest { scope: string; table: string; config?: TableConfiguration | null }
export type TableStateName = 'CREATING' | 'ACTIVE' | 'DELETING';
export interface TableInfo {
  scope: string;
  table: string;
  config?: TableConfiguration | null;
  state: TableStateName;
  createdAtMs: string;
}
export interface DeleteTableResponse { deleted: boolean }
export interface ListTablesRequest { scope: string; continuationToken: string; limit: number }
export interface ListTablesResponse { tables: string[]; continuationToken: string }

export interface Partition {
  index: number;
  hashLow: number;
  hashHigh: number;
  segmentId: string;
  storeId: string;
  storeAddress: string;
  storeLive: boolean;
}
export interface Routing {
  scope: string;
  table: string;
  partitionCount: number;
  generation: string;
  partitions: Partition[];
}
export interface TableDescription { table: TableInfo; partitions: Partition[] }

export interface RegisterSegmentStoreRequest { storeId: string; address: string }
export interface RegisterSegmentStoreResponse { heartbeatIntervalMs: number }
export interface HeartbeatRequest { storeId: string; address: string }
export interface HeartbeatResponse { known: boolean; heartbeatIntervalMs: number }
export type ListSegmentStoresRequest = Record<string, never>;
export interface SegmentStoreInfo {
  storeId: string;
  address: string;
  live: boolean;
  lastHeartbeatMs: string;
  segmentCount: number;
  lastHeartbeatAgeMs: string;
}
export interface ListSegmentStoresResponse { stores: SegmentStoreInfo[] }
export interface RemoveSegmentStoreRequest { storeId: string; force: boolean }
export interface ReplacedPartition {
  scope: string;
  table: string;
  partition: number;
  segmentId: string;
  newSegmentId: string;
  newStoreId: string;
}
export interface TableName { scope: string; table: string }
export interface RemoveSegmentStoreResponse {
  removed: boolean;
  address: string;
  lostPartitions: ReplacedPartition[];
  placedPartitions: ReplacedPartition[];
  deletingTables: TableName[];
  unfinishedTables: TableName[];
}
