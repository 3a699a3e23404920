/**
 * What the storage conformance suite drives: the segment-store operations with the wire shapes of
 * proto/messages.ts. Implemented by the in-process engine directly and by a gRPC client.
 */
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER, ERROR_INDEX_TRAILER } from '../../proto/error-codes';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import type { ExecuteRequest, ExecuteResponse, GetResponse, IterateResponse, ScanResponse, SegmentInfo, UpdateResponse } from '../../proto/messages';
import type { GetInput, SegmentEngine, UpdateInput } from '../../segmentstore/storage/segment-engine';
import type { IterateInput, ScanInput } from '../../segmentstore/storage/read/read-validation';

/** A failed call: the kvt code, the message and the index of the offending item (-1 when none). */
export interface StoreFailure {
  code: string;
  message: string;
  index: number;
}

/** The segment-store operations under test. Failures reject with a {@link StoreFailure}-shaped error. */
export interface SegmentStoreAdapter {
  createSegment(segmentId: string, table?: string): Promise<boolean>;
  deleteSegment(segmentId: string): Promise<boolean>;
  segmentInfo(segmentId: string): Promise<SegmentInfo>;
  listSegments(): Promise<SegmentInfo[]>;
  /** Resolves the sequence each modification got ("" for removes), in order. */
  update(req: UpdateInput): Promise<Pick<UpdateResponse, 'sequences'>>;
  get(req: GetInput): Promise<GetResponse>;
  iterate(req: IterateInput): Promise<IterateResponse>;
  scan(req: ScanInput): Promise<ScanResponse>;
  execute(req: ExecuteRequest): Promise<ExecuteResponse>;
}

/** A target of the suite: the adapter, an optional clock to move, and cleanup. */
export interface ConformanceTarget {
  store: SegmentStoreAdapter;
  /** Moves the store's clock forward; absent when the store runs on the real clock. */
  advanceClock?: (ms: number) => void;
  dispose(): Promise<void>;
}

/** Adapter over an in-process engine. */
export function engineAdapter(engine: SegmentEngine, executeImpl: (req: ExecuteRequest) => Promise<ExecuteResponse>): SegmentStoreAdapter {
  return {
    createSegment: (id, table) => engine.createSegment(id, table),
    deleteSegment: (id) => engine.deleteSegment(id),
    segmentInfo: (id) => engine.segmentInfo(id),
    listSegments: () => engine.listSegments(),
    update: (req) => engine.update(req),
    get: (req) => engine.get(req),
    iterate: (req) => engine.iterate(req),
    scan: (req) => engine.scan(req),
    execute: executeImpl,
  };
}

type Callback = (err: grpc.ServiceError | null, res: unknown) => void;
type Method = (req: unknown, opts: grpc.CallOptions, cb: Callback) => void;

function failureOf(err: grpc.ServiceError): StoreFailure & Error {
  const code = err.metadata?.get(ERROR_CODE_TRAILER)[0];
  const index = err.metadata?.get(ERROR_INDEX_TRAILER)[0];
  const failure = new Error(err.details) as StoreFailure & Error;
  failure.code = typeof code === 'string' ? code : `GRPC_${err.code}`;
  failure.index = typeof index === 'string' ? Number(index) : -1;
  return failure;
}

/**
 * A wire answer with `sequences` spelled out as the engine's UpdateOutcome does: the PUTs and INSERTs
 * of `req` in order get consecutive sequences from `firstSequence`, removes "" (so the suite reads
 * both targets alike).
 */
function withSequences(res: UpdateResponse, req: UpdateInput): UpdateResponse {
  if (res.sequences.length > 0) throw new Error(`the store answered the earlier form (${res.sequences.length} sequences)`);
  let next = res.firstSequence === '' ? 0n : BigInt(res.firstSequence);
  const sequences = (req.modifications ?? []).map((m) => (m.type === 'REMOVE' || m.type === 'REMOVE_RANGE' ? '' : String(next++)));
  return { sequences, firstSequence: res.firstSequence };
}

/** Adapter over a gRPC client of a running segment store; `close()` closes the channel. */
export function grpcAdapter(address: string): SegmentStoreAdapter & { close(): void } {
  const Client = kvtPackage().SegmentStore;
  const client = new Client(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as grpc.Client & Record<string, Method>;
  const call = <T>(name: string, req: unknown): Promise<T> =>
    new Promise((resolve, reject) => {
      client[name].call(client, req, { deadline: Date.now() + 30_000 }, (err, res) => (err ? reject(failureOf(err)) : resolve(res as T)));
    });
  return {
    createSegment: async (segmentId, table = '') => (await call<{ created: boolean }>('CreateSegment', { segmentId, table })).created,
    deleteSegment: async (segmentId) => (await call<{ deleted: boolean }>('DeleteSegment', { segmentId })).deleted,
    segmentInfo: (segmentId) => call('GetSegmentInfo', { segmentId }),
    listSegments: async () => (await call<{ segments: SegmentInfo[] }>('ListSegments', {})).segments,
    update: async (req) => withSequences(await call<UpdateResponse>('Update', req), req),
    get: (req) => call('Get', req),
    iterate: (req) => call('Iterate', req),
    scan: (req) => call('Scan', req),
    execute: (req) => call('Execute', req),
    close: () => client.close(),
  };
}
