// Original file: kvt/v1/segmentstore.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateSegmentRequest as _kvt_v1_CreateSegmentRequest, CreateSegmentRequest__Output as _kvt_v1_CreateSegmentRequest__Output } from '../../kvt/v1/CreateSegmentRequest';
import type { CreateSegmentResponse as _kvt_v1_CreateSegmentResponse, CreateSegmentResponse__Output as _kvt_v1_CreateSegmentResponse__Output } from '../../kvt/v1/CreateSegmentResponse';
import type { DeleteSegmentRequest as _kvt_v1_DeleteSegmentRequest, DeleteSegmentRequest__Output as _kvt_v1_DeleteSegmentRequest__Output } from '../../kvt/v1/DeleteSegmentRequest';
import type { DeleteSegmentResponse as _kvt_v1_DeleteSegmentResponse, DeleteSegmentResponse__Output as _kvt_v1_DeleteSegmentResponse__Output } from '../../kvt/v1/DeleteSegmentResponse';
import type { ExecuteRequest as _kvt_v1_ExecuteRequest, ExecuteRequest__Output as _kvt_v1_ExecuteRequest__Output } from '../../kvt/v1/ExecuteRequest';
import type { ExecuteResponse as _kvt_v1_ExecuteResponse, ExecuteResponse__Output as _kvt_v1_ExecuteResponse__Output } from '../../kvt/v1/ExecuteResponse';
import type { ExecuteStreamRequest as _kvt_v1_ExecuteStreamRequest, ExecuteStreamRequest__Output as _kvt_v1_ExecuteStreamRequest__Output } from '../../kvt/v1/ExecuteStreamRequest';
import type { ExecuteStreamResponse as _kvt_v1_ExecuteStreamResponse, ExecuteStreamResponse__Output as _kvt_v1_ExecuteStreamResponse__Output } from '../../kvt/v1/ExecuteStreamResponse';
import type { GetRequest as _kvt_v1_GetRequest, GetRequest__Output as _kvt_v1_GetRequest__Output } from '../../kvt/v1/GetRequest';
import type { GetResponse as _kvt_v1_GetResponse, GetResponse__Output as _kvt_v1_GetResponse__Output } from '../../kvt/v1/GetResponse';
import type { GetSegmentInfoRequest as _kvt_v1_GetSegmentInfoRequest, GetSegmentInfoRequest__Output as _kvt_v1_GetSegmentInfoRequest__Output } from '../../kvt/v1/GetSegmentInfoRequest';
import type { IterateRequest as _kvt_v1_IterateRequest, IterateRequest__Output as _kvt_v1_IterateRequest__Output } from '../../kvt/v1/IterateRequest';
import type { IterateResponse as _kvt_v1_IterateResponse, IterateResponse__Output as _kvt_v1_IterateResponse__Output } from '../../kvt/v1/IterateResponse';
import type { ListSegmentsRequest as _kvt_v1_ListSegmentsRequest, ListSegmentsRequest__Output as _kvt_v1_ListSegmentsRequest__Output } from '../../kvt/v1/ListSegmentsRequest';
import type { ListSegmentsResponse as _kvt_v1_ListSegmentsResponse, ListSegmentsResponse__Output as _kvt_v1_ListSegmentsResponse__Output } from '../../kvt/v1/ListSegmentsResponse';
import type { ScanRequest as _kvt_v1_ScanRequest, ScanRequest__Output as _kvt_v1_ScanRequest__Output } from '../../kvt/v1/ScanRequest';
import type { ScanResponse as _kvt_v1_ScanResponse, ScanResponse__Output as _kvt_v1_ScanResponse__Output } from '../../kvt/v1/ScanResponse';
import type { SegmentInfo as _kvt_v1_SegmentInfo, SegmentInfo__Output as _kvt_v1_SegmentInfo__Output } from '../../kvt/v1/SegmentInfo';
import type { UpdateRequest as _kvt_v1_UpdateRequest, UpdateRequest__Output as _kvt_v1_UpdateRequest__Output } from '../../kvt/v1/UpdateRequest';
import type { UpdateResponse as _kvt_v1_UpdateResponse, UpdateResponse__Output as _kvt_v1_UpdateResponse__Output } from '../../kvt/v1/UpdateResponse';

export interface SegmentStoreDefinition {
  CreateSegment: MethodDefinition<_kvt_v1_CreateSegmentRequest, _kvt_v1_CreateSegmentResponse, _kvt_v1_CreateSegmentRequest__Output, _kvt_v1_CreateSegmentResponse__Output>
  DeleteSegment: MethodDefinition<_kvt_v1_DeleteSegmentRequest, _kvt_v1_DeleteSegmentResponse, _kvt_v1_DeleteSegmentRequest__Output, _kvt_v1_DeleteSegmentResponse__Output>
  Execute: MethodDefinition<_kvt_v1_ExecuteRequest, _kvt_v1_ExecuteResponse, _kvt_v1_ExecuteRequest__Output, _kvt_v1_ExecuteResponse__Output>
  ExecuteStream: MethodDefinition<_kvt_v1_ExecuteStreamRequest, _kvt_v1_ExecuteStreamResponse, _kvt_v1_ExecuteStreamRequest__Output, _kvt_v1_ExecuteStreamResponse__Output>
  Get: MethodDefinition<_kvt_v1_GetRequest, _kvt_v1_GetResponse, _kvt_v1_GetRequest__Output, _kvt_v1_GetResponse__Output>
  GetSegmentInfo: MethodDefinition<_kvt_v1_GetSegmentInfoRequest, _kvt_v1_SegmentInfo, _kvt_v1_GetSegmentInfoRequest__Output, _kvt_v1_SegmentInfo__Output>
  Iterate: MethodDefinition<_kvt_v1_IterateRequest, _kvt_v1_IterateResponse, _kvt_v1_IterateRequest__Output, _kvt_v1_IterateResponse__Output>
  ListSegments: MethodDefinition<_kvt_v1_ListSegmentsRequest, _kvt_v1_ListSegmentsResponse, _kvt_v1_ListSegmentsRequest__Output, _kvt_v1_ListSegmentsResponse__Output>
  Scan: MethodDefinition<_kvt_v1_ScanRequest, _kvt_v1_ScanResponse, _kvt_v1_ScanRequest__Output, _kvt_v1_ScanResponse__Output>
  Update: MethodDefinition<_kvt_v1_UpdateRequest, _kvt_v1_UpdateResponse, _kvt_v1_UpdateRequest__Output, _kvt_v1_UpdateResponse__Output>
}
