// Original file: kvt/v1/controller.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateScopeResponse as _kvt_v1_CreateScopeResponse, CreateScopeResponse__Output as _kvt_v1_CreateScopeResponse__Output } from '../../kvt/v1/CreateScopeResponse';
import type { CreateTableRequest as _kvt_v1_CreateTableRequest, CreateTableRequest__Output as _kvt_v1_CreateTableRequest__Output } from '../../kvt/v1/CreateTableRequest';
import type { CreateTableResponse as _kvt_v1_CreateTableResponse, CreateTableResponse__Output as _kvt_v1_CreateTableResponse__Output } from '../../kvt/v1/CreateTableResponse';
import type { DeleteScopeResponse as _kvt_v1_DeleteScopeResponse, DeleteScopeResponse__Output as _kvt_v1_DeleteScopeResponse__Output } from '../../kvt/v1/DeleteScopeResponse';
import type { DeleteTableResponse as _kvt_v1_DeleteTableResponse, DeleteTableResponse__Output as _kvt_v1_DeleteTableResponse__Output } from '../../kvt/v1/DeleteTableResponse';
import type { HeartbeatRequest as _kvt_v1_HeartbeatRequest, HeartbeatRequest__Output as _kvt_v1_HeartbeatRequest__Output } from '../../kvt/v1/HeartbeatRequest';
import type { HeartbeatResponse as _kvt_v1_HeartbeatResponse, HeartbeatResponse__Output as _kvt_v1_HeartbeatResponse__Output } from '../../kvt/v1/HeartbeatResponse';
import type { ListScopesRequest as _kvt_v1_ListScopesRequest, ListScopesRequest__Output as _kvt_v1_ListScopesRequest__Output } from '../../kvt/v1/ListScopesRequest';
import type { ListScopesResponse as _kvt_v1_ListScopesResponse, ListScopesResponse__Output as _kvt_v1_ListScopesResponse__Output } from '../../kvt/v1/ListScopesResponse';
import type { ListSegmentStoresRequest as _kvt_v1_ListSegmentStoresRequest, ListSegmentStoresRequest__Output as _kvt_v1_ListSegmentStoresRequest__Output } from '../../kvt/v1/ListSegmentStoresRequest';
import type { ListSegmentStoresResponse as _kvt_v1_ListSegmentStoresResponse, ListSegmentStoresResponse__Output as _kvt_v1_ListSegmentStoresResponse__Output } from '../../kvt/v1/ListSegmentStoresResponse';
import type { ListTablesRequest as _kvt_v1_ListTablesRequest, ListTablesRequest__Output as _kvt_v1_ListTablesRequest__Output } from '../../kvt/v1/ListTablesRequest';
import type { ListTablesResponse as _kvt_v1_ListTablesResponse, ListTablesResponse__Output as _kvt_v1_ListTablesResponse__Output } from '../../kvt/v1/ListTablesResponse';
import type { RegisterSegmentStoreRequest as _kvt_v1_RegisterSegmentStoreRequest, RegisterSegmentStoreRequest__Output as _kvt_v1_RegisterSegmentStoreRequest__Output } from '../../kvt/v1/RegisterSegmentStoreRequest';
import type { RegisterSegmentStoreResponse as _kvt_v1_RegisterSegmentStoreResponse, RegisterSegmentStoreResponse__Output as _kvt_v1_RegisterSegmentStoreResponse__Output } from '../../kvt/v1/RegisterSegmentStoreResponse';
import type { RemoveSegmentStoreRequest as _kvt_v1_RemoveSegmentStoreRequest, RemoveSegmentStoreRequest__Output as _kvt_v1_RemoveSegmentStoreRequest__Output } from '../../kvt/v1/RemoveSegmentStoreRequest';
import type { RemoveSegmentStoreResponse as _kvt_v1_RemoveSegmentStoreResponse, RemoveSegmentStoreResponse__Output as _kvt_v1_RemoveSegmentStoreResponse__Output } from '../../kvt/v1/RemoveSegmentStoreResponse';
import type { Routing as _kvt_v1_Routing, Routing__Output as _kvt_v1_Routing__Output } from '../../kvt/v1/Routing';
import type { ScopeRequest as _kvt_v1_ScopeRequest, ScopeRequest__Output as _kvt_v1_ScopeRequest__Output } from '../../kvt/v1/ScopeRequest';
import type { TableDescription as _kvt_v1_TableDescription, TableDescription__Output as _kvt_v1_TableDescription__Output } from '../../kvt/v1/TableDescription';
import type { TableInfo as _kvt_v1_TableInfo, TableInfo__Output as _kvt_v1_TableInfo__Output } from '../../kvt/v1/TableInfo';
import type { TableRequest as _kvt_v1_TableRequest, TableRequest__Output as _kvt_v1_TableRequest__Output } from '../../kvt/v1/TableRequest';
import type { UpdateTableRequest as _kvt_v1_UpdateTableRequest, UpdateTableRequest__Output as _kvt_v1_UpdateTableRequest__Output } from '../../kvt/v1/UpdateTableRequest';

export interface ControllerDefinition {
  CreateScope: MethodDefinition<_kvt_v1_ScopeRequest, _kvt_v1_CreateScopeResponse, _kvt_v1_ScopeRequest__Output, _kvt_v1_CreateScopeResponse__Output>
  CreateTable: MethodDefinition<_kvt_v1_CreateTableRequest, _kvt_v1_CreateTableResponse, _kvt_v1_CreateTableRequest__Output, _kvt_v1_CreateTableResponse__Output>
  DeleteScope: MethodDefinition<_kvt_v1_ScopeRequest, _kvt_v1_DeleteScopeResponse, _kvt_v1_ScopeRequest__Output, _kvt_v1_DeleteScopeResponse__Output>
  DeleteTable: MethodDefinition<_kvt_v1_TableRequest, _kvt_v1_DeleteTableResponse, _kvt_v1_TableRequest__Output, _kvt_v1_DeleteTableResponse__Output>
  DescribeTable: MethodDefinition<_kvt_v1_TableRequest, _kvt_v1_TableDescription, _kvt_v1_TableRequest__Output, _kvt_v1_TableDescription__Output>
  GetRouting: MethodDefinition<_kvt_v1_TableRequest, _kvt_v1_Routing, _kvt_v1_TableRequest__Output, _kvt_v1_Routing__Output>
  GetTable: MethodDefinition<_kvt_v1_TableRequest, _kvt_v1_TableInfo, _kvt_v1_TableRequest__Output, _kvt_v1_TableInfo__Output>
  Heartbeat: MethodDefinition<_kvt_v1_HeartbeatRequest, _kvt_v1_HeartbeatResponse, _kvt_v1_HeartbeatRequest__Output, _kvt_v1_HeartbeatResponse__Output>
  ListScopes: MethodDefinition<_kvt_v1_ListScopesRequest, _kvt_v1_ListScopesResponse, _kvt_v1_ListScopesRequest__Output, _kvt_v1_ListScopesResponse__Output>
  ListSegmentStores: MethodDefinition<_kvt_v1_ListSegmentStoresRequest, _kvt_v1_ListSegmentStoresResponse, _kvt_v1_ListSegmentStoresRequest__Output, _kvt_v1_ListSegmentStoresResponse__Output>
  ListTables: MethodDefinition<_kvt_v1_ListTablesRequest, _kvt_v1_ListTablesResponse, _kvt_v1_ListTablesRequest__Output, _kvt_v1_ListTablesResponse__Output>
  RegisterSegmentStore: MethodDefinition<_kvt_v1_RegisterSegmentStoreRequest, _kvt_v1_RegisterSegmentStoreResponse, _kvt_v1_RegisterSegmentStoreRequest__Output, _kvt_v1_RegisterSegmentStoreResponse__Output>
  RemoveSegmentStore: MethodDefinition<_kvt_v1_RemoveSegmentStoreRequest, _kvt_v1_RemoveSegmentStoreResponse, _kvt_v1_RemoveSegmentStoreRequest__Output, _kvt_v1_RemoveSegmentStoreResponse__Output>
  UpdateTable: MethodDefinition<_kvt_v1_UpdateTableRequest, _kvt_v1_TableInfo, _kvt_v1_UpdateTableRequest__Output, _kvt_v1_TableInfo__Output>
}
