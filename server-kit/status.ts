/**
 * The servers' one mapping from domain errors to gRPC status: a failed call carries the gRPC code
 * matching the kvt code, the message naming the field and limit, and the `kvt-error-code` (and,
 * when known, `kvt-error-index`) trailers.
 */
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER, ERROR_INDEX_TRAILER, RETRY_AFTER_TRAILER, ErrorCode, ErrorCodes, isErrorCode } from '../proto/error-codes';
import { errorMessage, invalidArgument, KvtFault } from './fault';
import type { WireError } from '../proto/messages';

const GRPC_STATUS: Record<ErrorCode, grpc.status> = {
  BAD_KEY_VERSION: grpc.status.FAILED_PRECONDITION,
  NO_SUCH_KEY: grpc.status.FAILED_PRECONDITION,
  INVALID_ARGUMENT: grpc.status.INVALID_ARGUMENT,
  SEGMENT_NOT_FOUND: grpc.status.NOT_FOUND,
  SCOPE_NOT_FOUND: grpc.status.NOT_FOUND,
  TABLE_NOT_FOUND: grpc.status.NOT_FOUND,
  TABLE_NOT_ACTIVE: grpc.status.FAILED_PRECONDITION,
  SEGMENT_STORE_NOT_FOUND: grpc.status.NOT_FOUND,
  SEGMENT_STORE_LIVE: grpc.status.FAILED_PRECONDITION,
  SEGMENT_STORE_HOLDS_DATA: grpc.status.FAILED_PRECONDITION,
  SEGMENT_STORE_REMOVED: grpc.status.FAILED_PRECONDITION,
  UNAVAILABLE: grpc.status.UNAVAILABLE,
  OVERLOADED: grpc.status.UNAVAILABLE,
  UNAUTHENTICATED: grpc.status.UNAUTHENTICATED,
  PERMISSION_DENIED: grpc.status.PERMISSION_DENIED,
  INTERNAL: grpc.status.INTERNAL,
};

/** The gRPC status code used on the wire for a kvt error code. */
export function grpcStatusFor(code: ErrorCode): grpc.status {
  return GRPC_STATUS[code];
}

/** Code, message and index of any thrown value; unknown errors become INTERNAL. */
export function faultOf(err: unknown): KvtFault {
  if (err instanceof KvtFault) return err;
  const e = err as { code?: unknown; message?: unknown; index?: unknown } | undefined;
  if (e && isErrorCode(e.code)) {
    return new KvtFault(e.code, String(e.message ?? e.code), typeof e.index === 'number' ? e.index : -1);
  }
  return new KvtFault(ErrorCodes.INTERNAL, `internal error: ${e && typeof e.message === 'string' ? e.message : String(err)}`);
}

/** Code, message and index of any thrown value as the `Error` message of a response (`segmentId` when known). */
export function wireErrorOf(err: unknown, segmentId = ''): WireError {
  const fault = faultOf(err);
  return { code: fault.code, message: fault.message, index: fault.index, segmentId };
}

/** The `ServiceError`-shaped object to pass to a unary callback for `err`. */
export function toServiceError(err: unknown): Partial<grpc.StatusObject> {
  const fault = faultOf(err);
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_TRAILER, fault.code);
  if (fault.index >= 0) metadata.set(ERROR_INDEX_TRAILER, String(fault.index));
  if (fault.retryAfterMs !== undefined) metadata.set(RETRY_AFTER_TRAILER, String(fault.retryAfterMs));
  return { code: grpcStatusFor(fault.code), details: fault.message, metadata };
}

/** What a tolerant request decoder hands to the handler instead of a message it could not decode. */
export class MalformedRequest {
  constructor(
    /** The method's path, e.g. `/kvt.v1.SegmentStore/Update`. */
    readonly path: string,
    /** Why the bytes do not decode. */
    readonly reason: string,
  ) {}
}

/**
 * The service definition with request decoders that never throw: grpc-js answers a throwing decoder
 * with INTERNAL, but bytes that are not a valid message are the caller's fault. A failed decode
 * yields a {@link MalformedRequest}, which `unary()` answers with INVALID_ARGUMENT.
 */
export function tolerantDecoding(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(service as Record<string, grpc.MethodDefinition<unknown, unknown>>)) {
    const decode = method.requestDeserialize;
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        try {
          return decode(bytes);
        } catch (err) {
          return new MalformedRequest(method.path, errorMessage(err));
        }
      },
    };
  }
  return out as grpc.ServiceDefinition;
}

/**
 * Wraps an async handler as a grpc-js unary handler: resolves → callback(null, value),
 * throws → callback(toServiceError(err)). Never lets an exception escape into grpc-js.
 * A {@link MalformedRequest} (see `tolerantDecoding`) is answered with INVALID_ARGUMENT.
 */
export function unary<Req, Res>(handler: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>, onInternal?: (err: unknown) => void): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    let promise: Promise<Res>;
    const request: unknown = call.request;
    try {
      promise = request instanceof MalformedRequest ? Promise.reject(invalidArgument(`request is not a valid ${request.path.slice(1)} message: ${request.reason}`)) : handler(call.request, call);
    } catch (err) {
      promise = Promise.reject(err);
    }
    promise.then(
      (value) => callback(null, value),
      (err) => {
        const fault = faultOf(err);
        if (fault.code === ErrorCodes.INTERNAL && onInternal) onInternal(err);
        callback(toServiceError(fault) as grpc.ServiceError);
      },
    );
  };
}

const BIDI = Symbol('kvt.bidiStreaming');

/**
 * Marks `handler` as a bidirectional-streaming handler, so wrappers that see only the handler map
 * (the token check in auth.ts) treat it as one: its call has no callback and fails by emitting an error.
 */
export function bidiStreaming<T extends (call: never) => void>(handler: T): T {
  return Object.assign(handler, { [BIDI]: true });
}

/** True for a handler marked with {@link bidiStreaming}. */
export function isBidiStreaming(handler: unknown): boolean {
  return typeof handler === 'function' && (handler as unknown as Record<symbol, unknown>)[BIDI] === true;
}
