/**
 * THE one place where failures coming back from a server become typed errors: a gRPC status (with the
 * `kvt-error-code` / `kvt-error-index` trailers) or the `Error` of an `Execute` sub-response. The
 * original is kept as `cause`.
 */
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER, ERROR_INDEX_TRAILER } from '../../proto/error-codes';
import type { WireError } from '../../proto/messages';
import {
  BadKeyVersionError,
  InvalidArgumentError,
  KvtError,
  KvtErrorContext,
  NoSuchKeyError,
  ObjectClosedError,
  OverloadedError,
  PermissionDeniedError,
  ScopeNotFoundError,
  SegmentStoreHoldsDataError,
  SegmentStoreLiveError,
  SegmentStoreNotFoundError,
  SegmentStoreRemovedError,
  ServiceError,
  TableNotActiveError,
  TableNotFoundError,
  UnauthenticatedError,
  UnavailableError,
} from '../errors';
import { isRefusedUnrun } from './retry';

/** What the caller knows about the failed request, to name in the error. */
export interface ErrorSite {
  table?: string;
  segment?: string;
  /** The caller's key at a batch index, to name the failing key. */
  keyAt?: (index: number) => unknown;
  /** True when the request was an update that may have been applied (see {@link UnavailableError}). */
  maybeApplied?: boolean;
}

type Build = (message: string, context: KvtErrorContext & { maybeApplied?: boolean }) => KvtError;

const BY_CODE: Record<string, Build> = {
  BAD_KEY_VERSION: (m, c) => new BadKeyVersionError(m, c),
  NO_SUCH_KEY: (m, c) => new NoSuchKeyError(m, c),
  INVALID_ARGUMENT: (m, c) => new InvalidArgumentError(m, c),
  SCOPE_NOT_FOUND: (m, c) => new ScopeNotFoundError(m, c),
  TABLE_NOT_FOUND: (m, c) => new TableNotFoundError(m, c),
  TABLE_NOT_ACTIVE: (m, c) => new TableNotActiveError(m, c),
  SEGMENT_STORE_NOT_FOUND: (m, c) => new SegmentStoreNotFoundError(m, c),
  SEGMENT_STORE_LIVE: (m, c) => new SegmentStoreLiveError(m, c),
  SEGMENT_STORE_HOLDS_DATA: (m, c) => new SegmentStoreHoldsDataError(m, c),
  SEGMENT_STORE_REMOVED: (m, c) => new SegmentStoreRemovedError(m, c),
  UNAVAILABLE: (m, c) => new UnavailableError(m, c),
  OVERLOADED: (m, c) => new OverloadedError(m, c),
  UNAUTHENTICATED: (m, c) => new UnauthenticatedError(m, c),
  PERMISSION_DENIED: (m, c) => new PermissionDeniedError(m, c),
  SEGMENT_NOT_FOUND: (m, c) => new ServiceError(m, { ...c, code: 'SEGMENT_NOT_FOUND' }),
  INTERNAL: (m, c) => new ServiceError(m, { ...c, code: 'INTERNAL' }),
};

/** kvt codes for gRPC statuses that arrive without a `kvt-error-code` trailer (transport failures). */
const BY_STATUS: Partial<Record<grpc.status, string>> = {
  [grpc.status.UNAVAILABLE]: 'UNAVAILABLE',
  [grpc.status.DEADLINE_EXCEEDED]: 'UNAVAILABLE',
  [grpc.status.INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [grpc.status.UNAUTHENTICATED]: 'UNAUTHENTICATED',
  [grpc.status.PERMISSION_DENIED]: 'PERMISSION_DENIED',
};

function isStatusError(err: unknown): err is grpc.ServiceError {
  return typeof err === 'object' && err !== null && typeof (err as grpc.ServiceError).code === 'number' && 'metadata' in err;
}

function isWireError(err: unknown): err is WireError {
  return typeof err === 'object' && err !== null && typeof (err as WireError).code === 'string' && 'index' in err && !(err instanceof Error);
}

/** Code, message and index carried by a status error or a wire error. */
function decode(err: grpc.ServiceError | WireError): { code: string; message: string; index: number; segment?: string } {
  if (isWireError(err)) return { code: err.code, message: err.message, index: err.index ?? -1, segment: err.segmentId || undefined };
  const trailer = err.metadata?.get(ERROR_CODE_TRAILER)?.[0];
  const indexText = err.metadata?.get(ERROR_INDEX_TRAILER)?.[0];
  const index = indexText === undefined ? -1 : Number(indexText);
  if (typeof trailer === 'string' && trailer) return { code: trailer, message: err.details || err.message, index };
  // No kvt code: grpc-js's own failure (no connection, deadline, …), worded by it.
  const message = (err.details || err.message).replace(/Last error: Error: /, 'Last error: ').replace(/\s*Resolution note:\s*$/, '');
  if (err.code === grpc.status.CANCELLED) return { code: 'OBJECT_CLOSED', message: `call cancelled: ${message}`, index };
  return { code: BY_STATUS[err.code as grpc.status] ?? 'SERVICE_ERROR', message, index };
}

/**
 * Turns anything a call failed with into a {@link KvtError}: status errors and wire errors by their
 * kvt code (unknown codes → {@link ServiceError}), KvtErrors unchanged, anything else → ServiceError.
 */
export function toKvtError(err: unknown, site: ErrorSite = {}): KvtError {
  if (err instanceof KvtError) return err;
  if (!isStatusError(err) && !isWireError(err)) {
    const text = err instanceof Error ? err.message : String(err);
    return new ServiceError(`unexpected failure: ${text}`, { code: 'SERVICE_ERROR', cause: err, table: site.table, segment: site.segment });
  }
  const { code, message, index, segment } = decode(err);
  const context: KvtErrorContext & { maybeApplied?: boolean } = { cause: err, table: site.table, segment: segment ?? site.segment };
  let text = message;
  if (index >= 0) {
    context.index = index;
    if (site.keyAt) {
      context.key = site.keyAt(index);
      text = `${message} (key ${describeKey(context.key)}${site.table ? ` of table ${site.table}` : ''})`;
    }
  }
  if (code === 'OBJECT_CLOSED') return new ObjectClosedError(text, context);
  if (isRefusedUnrun(code)) context.maybeApplied = site.maybeApplied ?? false;
  const build = BY_CODE[code];
  return build ? build(text, context) : new ServiceError(`${code}: ${text}`, { ...context, code: 'SERVICE_ERROR' });
}

/** A short, printable rendering of a caller's key for error messages. */
export function describeKey(key: unknown): string {
  if (key instanceof Uint8Array) return `0x${Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('hex').slice(0, 64)}`;
  try {
    const text = JSON.stringify(key) ?? String(key);
    return text.length > 100 ? `${text.slice(0, 100)}…` : text;
  } catch {
    return String(key);
  }
}
