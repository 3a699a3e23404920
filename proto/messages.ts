/**
 * The `kvt.v1` (and `kvt.ops.v1`) message types under the names the code uses: each is the generator's shape of the
 * message as the loader decodes it (`X__Output` in proto/generated/, written from the `.proto` files
 * by `npm run proto:types`: camelCase, uint64 as decimal string, enums as names, bytes as Buffer,
 * defaults filled in, the oneof's virtual field). `XInput` is what may be sent: any field may be
 * omitted, and bytes may be any Uint8Array.
 */

// ---- segment store ----

export type { _kvt_v1_Condition_Kind__Output as ConditionKind } from './generated/kvt/v1/Condition';
export type { _kvt_v1_Modification_Type__Output as ModificationType } from './generated/kvt/v1/Modification';
export type { Condition__Output as Condition, Condition as ConditionInput } from './generated/kvt/v1/Condition';
export type { Modification__Output as Modification, Modification as ModificationInput } from './generated/kvt/v1/Modification';
export type { CreateSegmentRequest__Output as CreateSegmentRequest, CreateSegmentRequest as CreateSegmentRequestInput } from './generated/kvt/v1/CreateSegmentRequest';
export type { CreateSegmentResponse__Output as CreateSegmentResponse, CreateSegmentResponse as CreateSegmentResponseInput } from './generated/kvt/v1/CreateSegmentResponse';
export type { DeleteSegmentRequest__Output as DeleteSegmentRequest, DeleteSegmentRequest as DeleteSegmentRequestInput } from './generated/kvt/v1/DeleteSegmentRequest';
export type { DeleteSegmentResponse__Output as DeleteSegmentResponse, DeleteSegmentResponse as DeleteSegmentResponseInput } from './generated/kvt/v1/DeleteSegmentResponse';
export type { GetSegmentInfoRequest__Output as GetSegmentInfoRequest, GetSegmentInfoRequest as GetSegmentInfoRequestInput } from './generated/kvt/v1/GetSegmentInfoRequest';
export type { SegmentInfo__Output as SegmentInfo, SegmentInfo as SegmentInfoInput } from './generated/kvt/v1/SegmentInfo';
export type { ListSegmentsRequest__Output as ListSegmentsRequest, ListSegmentsRequest as ListSegmentsRequestInput } from './generated/kvt/v1/ListSegmentsRequest';
export type { ListSegmentsResponse__Output as ListSegmentsResponse, ListSegmentsResponse as ListSegmentsResponseInput } from './generated/kvt/v1/ListSegmentsResponse';
export type { UpdateRequest__Output as UpdateRequest, UpdateRequest as UpdateRequestInput } from './generated/kvt/v1/UpdateRequest';
export type { UpdateResponse__Output as UpdateResponse, UpdateResponse as UpdateResponseInput } from './generated/kvt/v1/UpdateResponse';
export type { KeyRef__Output as KeyRef, KeyRef as KeyRefInput } from './generated/kvt/v1/KeyRef';
export type { GetRequest__Output as GetRequest, GetRequest as GetRequestInput } from './generated/kvt/v1/GetRequest';
export type { Entry__Output as Entry, Entry as EntryInput } from './generated/kvt/v1/Entry';
export type { GetResponse__Output as GetResponse, GetResponse as GetResponseInput } from './generated/kvt/v1/GetResponse';
export type { IterateRequest__Output as IterateRequest, IterateRequest as IterateRequestInput } from './generated/kvt/v1/IterateRequest';
export type { IterateResponse__Output as IterateResponse, IterateResponse as IterateResponseInput } from './generated/kvt/v1/IterateResponse';
export type { ScanRequest__Output as ScanRequest, ScanRequest as ScanRequestInput } from './generated/kvt/v1/ScanRequest';
export type { ScanItem__Output as ScanItem, ScanItem as ScanItemInput } from './generated/kvt/v1/ScanItem';
export type { ScanResponse__Output as ScanResponse, ScanResponse as ScanResponseInput } from './generated/kvt/v1/ScanResponse';
export type { SubRequest__Output as SubRequest, SubRequest as SubRequestInput } from './generated/kvt/v1/SubRequest';
// `kvt.v1.Error` is WireError here, so as not to shadow the global Error.
export type { Error__Output as WireError, Error as WireErrorInput } from './generated/kvt/v1/Error';
export type { ExecuteRequest__Output as ExecuteRequest, ExecuteRequest as ExecuteRequestInput } from './generated/kvt/v1/ExecuteRequest';
export type { SubResponse__Output as SubResponse, SubResponse as SubResponseInput } from './generated/kvt/v1/SubResponse';
export type { ExecuteResponse__Output as ExecuteResponse, ExecuteResponse as ExecuteResponseInput } from './generated/kvt/v1/ExecuteResponse';
export type { ExecuteStreamRequest__Output as ExecuteStreamRequest, ExecuteStreamRequest as ExecuteStreamRequestInput } from './generated/kvt/v1/ExecuteStreamRequest';
export type { ExecuteStreamResponse__Output as ExecuteStreamResponse, ExecuteStreamResponse as ExecuteStreamResponseInput } from './generated/kvt/v1/ExecuteStreamResponse';

// ---- controller ----

/**
 * The states of `TableInfo.state`. Hand-written: the `.proto` keeps the state a string (its comment
 * lists these), so the generator can only say `string`.
 */
export type TableStateName = 'CREATING' | 'ACTIVE' | 'DELETING';
export type { ScopeRequest__Output as ScopeRequest, ScopeRequest as ScopeRequestInput } from './generated/kvt/v1/ScopeRequest';
export type { CreateScopeResponse__Output as CreateScopeResponse, CreateScopeResponse as CreateScopeResponseInput } from './generated/kvt/v1/CreateScopeResponse';
export type { DeleteScopeResponse__Output as DeleteScopeResponse, DeleteScopeResponse as DeleteScopeResponseInput } from './generated/kvt/v1/DeleteScopeResponse';
export type { ListScopesRequest__Output as ListScopesRequest, ListScopesRequest as ListScopesRequestInput } from './generated/kvt/v1/ListScopesRequest';
export type { ListScopesResponse__Output as ListScopesResponse, ListScopesResponse as ListScopesResponseInput } from './generated/kvt/v1/ListScopesResponse';
export type { TableConfiguration__Output as TableConfiguration, TableConfiguration as TableConfigurationInput } from './generated/kvt/v1/TableConfiguration';
export type { CreateTableRequest__Output as CreateTableRequest, CreateTableRequest as CreateTableRequestInput } from './generated/kvt/v1/CreateTableRequest';
export type { CreateTableResponse__Output as CreateTableResponse, CreateTableResponse as CreateTableResponseInput } from './generated/kvt/v1/CreateTableResponse';
export type { TableRequest__Output as TableRequest, TableRequest as TableRequestInput } from './generated/kvt/v1/TableRequest';
export type { UpdateTableRequest__Output as UpdateTableRequest, UpdateTableRequest as UpdateTableRequestInput } from './generated/kvt/v1/UpdateTableRequest';
export type { TableInfo__Output as TableInfo, TableInfo as TableInfoInput } from './generated/kvt/v1/TableInfo';
export type { DeleteTableResponse__Output as DeleteTableResponse, DeleteTableResponse as DeleteTableResponseInput } from './generated/kvt/v1/DeleteTableResponse';
export type { ListTablesRequest__Output as ListTablesRequest, ListTablesRequest as ListTablesRequestInput } from './generated/kvt/v1/ListTablesRequest';
export type { ListTablesResponse__Output as ListTablesResponse, ListTablesResponse as ListTablesResponseInput } from './generated/kvt/v1/ListTablesResponse';
export type { Partition__Output as Partition, Partition as PartitionInput } from './generated/kvt/v1/Partition';
export type { Routing__Output as Routing, Routing as RoutingInput } from './generated/kvt/v1/Routing';
export type { TableDescription__Output as TableDescription, TableDescription as TableDescriptionInput } from './generated/kvt/v1/TableDescription';
export type {
  RegisterSegmentStoreRequest__Output as RegisterSegmentStoreRequest,
  RegisterSegmentStoreRequest as RegisterSegmentStoreRequestInput,
} from './generated/kvt/v1/RegisterSegmentStoreRequest';
export type {
  RegisterSegmentStoreResponse__Output as RegisterSegmentStoreResponse,
  RegisterSegmentStoreResponse as RegisterSegmentStoreResponseInput,
} from './generated/kvt/v1/RegisterSegmentStoreResponse';
export type { HeartbeatRequest__Output as HeartbeatRequest, HeartbeatRequest as HeartbeatRequestInput } from './generated/kvt/v1/HeartbeatRequest';
export type { HeartbeatResponse__Output as HeartbeatResponse, HeartbeatResponse as HeartbeatResponseInput } from './generated/kvt/v1/HeartbeatResponse';
export type { ListSegmentStoresRequest__Output as ListSegmentStoresRequest, ListSegmentStoresRequest as ListSegmentStoresRequestInput } from './generated/kvt/v1/ListSegmentStoresRequest';
export type { SegmentStoreInfo__Output as SegmentStoreInfo, SegmentStoreInfo as SegmentStoreInfoInput } from './generated/kvt/v1/SegmentStoreInfo';
export type { ListSegmentStoresResponse__Output as ListSegmentStoresResponse, ListSegmentStoresResponse as ListSegmentStoresResponseInput } from './generated/kvt/v1/ListSegmentStoresResponse';
export type { RemoveSegmentStoreRequest__Output as RemoveSegmentStoreRequest, RemoveSegmentStoreRequest as RemoveSegmentStoreRequestInput } from './generated/kvt/v1/RemoveSegmentStoreRequest';
export type { ReplacedPartition__Output as ReplacedPartition, ReplacedPartition as ReplacedPartitionInput } from './generated/kvt/v1/ReplacedPartition';
export type { TableName__Output as TableName, TableName as TableNameInput } from './generated/kvt/v1/TableName';
export type { RemoveSegmentStoreResponse__Output as RemoveSegmentStoreResponse, RemoveSegmentStoreResponse as RemoveSegmentStoreResponseInput } from './generated/kvt/v1/RemoveSegmentStoreResponse';

// ---- operations (`kvt.ops.v1`, proto/kvt/ops/v1/metrics.proto) ----

export type { GetMetricsRequest__Output as GetMetricsRequest, GetMetricsRequest as GetMetricsRequestInput } from './generated/kvt/ops/v1/GetMetricsRequest';
export type { GetMetricsResponse__Output as GetMetricsResponse, GetMetricsResponse as GetMetricsResponseInput } from './generated/kvt/ops/v1/GetMetricsResponse';
export type { Metric__Output as Metric, Metric as MetricInput } from './generated/kvt/ops/v1/Metric';
export type { Sample__Output as MetricSample, Sample as MetricSampleInput } from './generated/kvt/ops/v1/Sample';
