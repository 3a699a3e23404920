/**
 * Wire error codes: the contract between servers and the client. A failed call carries a gRPC status
 * plus the trailer {@link ERROR_CODE_TRAILER} holding one of these; an `Execute` sub-response carries
 * the same code in its `Error` message. Codes are stable; messages may change.
 */
export const ErrorCodes = {
  /** A condition failed: the key exists (insert / NOT_EXISTS) or its version differs. */
  BAD_KEY_VERSION: 'BAD_KEY_VERSION',
  /** A conditional update named a key that does not exist. */
  NO_SUCH_KEY: 'NO_SUCH_KEY',
  /** Malformed request, a name or a value out of its limits; nothing was written. */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** The segment is not hosted by this store (deleted, or routing is stale). */
  SEGMENT_NOT_FOUND: 'SEGMENT_NOT_FOUND',
  SCOPE_NOT_FOUND: 'SCOPE_NOT_FOUND',
  TABLE_NOT_FOUND: 'TABLE_NOT_FOUND',
  /** The table exists but is not ACTIVE (being created or deleted). */
  TABLE_NOT_ACTIVE: 'TABLE_NOT_ACTIVE',
  /** No segment store is known under the id (neither registered nor removed). */
  SEGMENT_STORE_NOT_FOUND: 'SEGMENT_STORE_NOT_FOUND',
  /** A removal asked for a segment store the controller still hears from. */
  SEGMENT_STORE_LIVE: 'SEGMENT_STORE_LIVE',
  /** A removal without force asked for a segment store holding partitions of ACTIVE tables. */
  SEGMENT_STORE_HOLDS_DATA: 'SEGMENT_STORE_HOLDS_DATA',
  /** A removed segment store tried to register again: its data directory must be wiped first. */
  SEGMENT_STORE_REMOVED: 'SEGMENT_STORE_REMOVED',
  /** No live store, a store is stopping, or a deadline passed. */
  UNAVAILABLE: 'UNAVAILABLE',
  /**
   * A segment store already holds as many requests as its `--max-in-flight-mb` allows: this one was
   * not run (retry it after a backoff, an update too; the routing is right, the store is busy).
   */
  OVERLOADED: 'OVERLOADED',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  /** A bug or an unexpected storage failure. */
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** gRPC trailer (metadata key) holding the {@link ErrorCode} of a failed call. */
export const ERROR_CODE_TRAILER = 'kvt-error-code';
/** gRPC trailer holding the index of the offending modification or key, when there is one. */
export const ERROR_INDEX_TRAILER = 'kvt-error-index';
/**
 * gRPC trailer holding, in milliseconds, when a refused call can be tried again with a chance of
 * success (a controller refusing a moved store's registration while its old address still counts as live).
 */
export const RETRY_AFTER_TRAILER = 'kvt-retry-after-ms';

const known = new Set<string>(Object.values(ErrorCodes));

/** True when `code` is one of {@link ErrorCodes}. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && known.has(code);
}
