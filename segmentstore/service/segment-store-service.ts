/**
 * gRPC handlers of `kvt.v1.SegmentStore` over a {@link SegmentEngine}. Every handler goes through
 * `unary()` (server-kit/status.ts), the one place that maps domain errors to gRPC status and the
 * `kvt-error-code` trailer; `Execute` maps each sub-request's error into its `SubResponse.error`.
 * Nothing a caller sends can crash the process: every failure becomes a status.
 */
import type * as grpc from '@grpc/grpc-js';
import type {
  CreateSegmentRequest,
  CreateSegmentResponse,
  DeleteSegmentRequest,
  DeleteSegmentResponse,
  ExecuteRequest,
  GetRequest,
  GetSegmentInfoRequest,
  IterateRequest,
  ScanRequest,
  ListSegmentsResponse,
  SubRequest,
  UpdateRequest,
  UpdateResponse,
} from '../../proto/messages';
import { segmentStoreService } from '../../proto/load';
import type { Logger } from '../../server-kit/log';
import { unary, wireErrorOf } from '../../server-kit/status';
import { invalidArgument } from '../../server-kit/fault';
import { getAnswerCaps } from '../storage/read/page-caps';
import { SegmentEngine } from '../storage/segment-engine';
import type { UpdateOutcome } from '../storage/update-stager';
import { ExecuteStreams } from './execute-stream';
import { BOUNDED_METHODS, bounded, holdingAnswers, notingSizes } from './bounded-calls';
import { InFlightBudget } from './in-flight-budget';
import { SubResponseLike, WireExecuteResponse, withFastCodecs } from './wire-codec';
import { iterateForWire } from './wire-page-sink';

function subRequestKind(sub: SubRequest): 'update' | 'get' | 'iterate' | undefined {
  if (sub?.request === 'update' || (sub?.request === undefined && sub?.update)) return 'update';
  if (sub?.request === 'get' || (sub?.request === undefined && sub?.get)) return 'get';
  if (sub?.request === 'iterate' || (sub?.request === undefined && sub?.iterate)) return 'iterate';
  return undefined;
}

const NO_SEQUENCES: string[] = [];

/** The wire answer of an update: its first sequence only (see UpdateResponse in segmentstore.proto). */
function updateResponse(outcome: UpdateOutcome): UpdateResponse {
  return { sequences: NO_SEQUENCES, firstSequence: outcome.firstSequence === 0 ? '' : String(outcome.firstSequence) };
}

function errorResponse(err: unknown, segmentId: string | undefined): SubResponseLike {
  return { error: wireErrorOf(err, segmentId) };
}

/**
 * Runs every sub-request on its own (an Update is atomic by itself), in request order; all Updates
 * enter the same group commit. Results come back in request order. The Gets of one answer share
 * `budget` (by default the caps of one message; an ExecuteStream's also draw on the stream's pool);
 * an iterator page is capped by itself (2 MiB: the client sends few in one call).
 */
export function execute(engine: SegmentEngine, req: ExecuteRequest, budget = getAnswerCaps()): Promise<WireExecuteResponse> {
  const subs = Array.isArray(req?.requests) ? req.requests : [];
  const pending = engine.withHeldCommits((update) =>
    subs.map((sub, i): Promise<SubResponseLike> => {
      const kind = subRequestKind(sub);
      if (kind === 'update') {
        return update(sub.update!).then(
          (res) => ({ update: updateResponse(res) }),
          (err) => errorResponse(err, sub.update!.segmentId),
        );
      }
      if (kind === 'get') {
        return engine.get(sub.get!, budget).then(
          (res) => ({ get: res }),
          (err) => errorResponse(err, sub.get!.segmentId),
        );
      }
      if (kind === 'iterate') {
        return iterateForWire(engine, sub.iterate!).then(
          (page) => ({ iterate: page }),
          (err) => errorResponse(err, sub.iterate!.segmentId),
        );
      }
      return Promise.resolve(errorResponse(invalidArgument(`requests[${i}] holds neither update, get nor iterate`), undefined));
    }),
  );
  return Promise.all(pending).then((responses) => ({ responses }));
}

/** The service definition to serve: the loader's, with the hand-written codecs of wire-codec.ts for Execute and Iterate. */
export function segmentStoreDefinition(): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = { ...withFastCodecs(segmentStoreService()) };
  for (const method of BOUNDED_METHODS) definition[method] = notingSizes(definition[method]);
  return definition as grpc.ServiceDefinition;
}

/** The server interceptor that holds the answers of the unary data calls in `budget` until they are written (bounded-calls.ts). */
export function answerHolding(budget: InFlightBudget): grpc.ServerInterceptor {
  const service = segmentStoreService();
  return holdingAnswers(
    budget,
    BOUNDED_METHODS.map((method) => service[method].path),
  );
}

/** The `ExecuteStream` handler's state for `engine` (the store ends its streams on stop). */
export function executeStreams(engine: SegmentEngine, log: Logger, budget?: InFlightBudget): ExecuteStreams {
  return new ExecuteStreams(
    (req, caps) => execute(engine, req, caps),
    (req) => iterateForWire(engine, req),
    (err) => log.error('internal error', { err }),
    budget,
  );
}

/** The handlers object to pass to `server.addService(segmentStoreDefinition(), …)`. */
export function segmentStoreHandlers(engine: SegmentEngine, log: Logger, streams: ExecuteStreams, budget = new InFlightBudget(Infinity)): grpc.UntypedServiceImplementation {
  const onInternal = (err: unknown) => log.error('internal error', { err });
  return {
    CreateSegment: unary<CreateSegmentRequest, CreateSegmentResponse>(async (req) => ({ created: await engine.createSegment(req.segmentId, req.table) }), onInternal),
    DeleteSegment: unary<DeleteSegmentRequest, DeleteSegmentResponse>(async (req) => ({ deleted: await engine.deleteSegment(req.segmentId) }), onInternal),
    GetSegmentInfo: unary((req: GetSegmentInfoRequest) => engine.segmentInfo(req.segmentId), onInternal),
    ListSegments: unary(async (): Promise<ListSegmentsResponse> => ({ segments: await engine.listSegments() }), onInternal),
    Update: unary(
      bounded(budget, 'Update', (req: UpdateRequest) => engine.update(req).then(updateResponse)),
      onInternal,
    ),
    Get: unary(
      bounded(budget, 'Get', (req: GetRequest) => engine.get(req)),
      onInternal,
    ),
    Iterate: unary(
      bounded(budget, 'Iterate', (req: IterateRequest) => iterateForWire(engine, req)),
      onInternal,
    ),
    Scan: unary(
      bounded(budget, 'Scan', (req: ScanRequest) => engine.scan(req)),
      onInternal,
    ),
    Execute: unary(
      bounded(budget, 'Execute', (req: ExecuteRequest) => execute(engine, req)),
      onInternal,
    ),
    ExecuteStream: streams.handler,
  };
}
