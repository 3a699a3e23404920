/**
 * The errors of the kvt client. Every error extends {@link KvtError} and carries a stable `code`
 * (UPPER_SNAKE; the contract, listed in README.md); messages may change. Context fields name the
 * table, segment, key and batch index involved when they are known, and `cause` keeps the underlying
 * error (usually the gRPC status) for diagnostics.
 */

/** Context carried by every {@link KvtError}. */
export interface KvtErrorContext {
  /** The underlying error, e.g. the gRPC status error. */
  cause?: unknown;
  /** `scope/table` the operation addressed. */
  table?: string;
  /** The table segment the operation addressed (uint64 as a decimal string). */
  segment?: string;
  /** The key (as passed by the caller) the error is about. */
  key?: unknown;
  /** Index of the offending item in the caller's batch. */
  index?: number;
}

/** Base class of every error the kvt client throws. */
export class KvtError extends Error {
  override name = 'KvtError';
  /** Stable error code (UPPER_SNAKE): the contract; messages may change. */
  readonly code: string;
  /** `scope/table`, when known. */
  readonly table?: string;
  /** Table segment id, when known. */
  readonly segment?: string;
  /** The key the error is about, when known. */
  readonly key?: unknown;
  /** Index of the offending item in the caller's batch, when known. */
  readonly index?: number;

  /**
   * True on the errors that answer an optimistic write (a failed condition, a document conflict): they
   * are built without stack frames (their `stack` is their first line). Callers catch and retry them,
   * they are not faults of the program, and capturing the frames (with their async callers, ~9 µs) was a
   * fifth of a client's CPU under contention (bench W3, where most read-modify-writes lose a condition
   * at least once).
   */
  static readonly withoutStack: boolean = false;

  constructor(code: string, message: string, context: KvtErrorContext = {}) {
    const limit = Error.stackTraceLimit;
    if ((new.target as typeof KvtError).withoutStack) Error.stackTraceLimit = 0;
    try {
      super(message, context.cause === undefined ? undefined : { cause: context.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.code = code;
    if (context.table !== undefined) this.table = context.table;
    if (context.segment !== undefined) this.segment = context.segment;
    if (context.key !== undefined) this.key = context.key;
    if (context.index !== undefined) this.index = context.index;
  }
}

/** A conditional update failed; nothing of its batch was written. No stack frames (see {@link KvtError.withoutStack}). */
export class ConditionalTableUpdateError extends KvtError {
  static override readonly withoutStack = true;
  override name = 'ConditionalTableUpdateError';
}

/** The key exists although it had to be absent, or its version differs from the expected one. */
export class BadKeyVersionError extends ConditionalTableUpdateError {
  override name = 'BadKeyVersionError';
  constructor(message: string, context?: KvtErrorContext) {
    super('BAD_KEY_VERSION', message, context);
  }
}

/** A conditional update named a key that does not exist. */
export class NoSuchKeyError extends ConditionalTableUpdateError {
  override name = 'NoSuchKeyError';
  constructor(message: string, context?: KvtErrorContext) {
    super('NO_SUCH_KEY', message, context);
  }
}

/** Bad input (a name, a limit, a malformed version or token); nothing was written. */
export class InvalidArgumentError extends KvtError {
  override name = 'InvalidArgumentError';
  constructor(message: string, context?: KvtErrorContext) {
    super('INVALID_ARGUMENT', message, context);
  }
}

/** The scope does not exist. */
export class ScopeNotFoundError extends KvtError {
  override name = 'ScopeNotFoundError';
  constructor(message: string, context?: KvtErrorContext) {
    super('SCOPE_NOT_FOUND', message, context);
  }
}

/** The key-value table does not exist. */
export class TableNotFoundError extends KvtError {
  override name = 'TableNotFoundError';
  constructor(message: string, context?: KvtErrorContext) {
    super('TABLE_NOT_FOUND', message, context);
  }
}

/** The table exists but is being created or deleted. */
export class TableNotActiveError extends KvtError {
  override name = 'TableNotActiveError';
  constructor(message: string, context?: KvtErrorContext) {
    super('TABLE_NOT_ACTIVE', message, context);
  }
}

/** No segment store is known under the id (neither registered nor removed). */
export class SegmentStoreNotFoundError extends KvtError {
  override name = 'SegmentStoreNotFoundError';
  constructor(message: string, context?: KvtErrorContext) {
    super('SEGMENT_STORE_NOT_FOUND', message, context);
  }
}

/** A segment store cannot be removed while the controller hears from it: stop it first, or wait. */
export class SegmentStoreLiveError extends KvtError {
  override name = 'SegmentStoreLiveError';
  constructor(message: string, context?: KvtErrorContext) {
    super('SEGMENT_STORE_LIVE', message, context);
  }
}

/**
 * The segment store holds the only copy of partitions of ACTIVE tables (the message names them):
 * removing it loses their data, so the removal needs `force`.
 */
export class SegmentStoreHoldsDataError extends KvtError {
  override name = 'SegmentStoreHoldsDataError';
  constructor(message: string, context?: KvtErrorContext) {
    super('SEGMENT_STORE_HOLDS_DATA', message, context);
  }
}

/** The segment store was removed from the cluster; it may join again only with a wiped data directory. */
export class SegmentStoreRemovedError extends KvtError {
  override name = 'SegmentStoreRemovedError';
  constructor(message: string, context?: KvtErrorContext) {
    super('SEGMENT_STORE_REMOVED', message, context);
  }
}

/** The object (manager, factory, table) was closed before or during the call. */
export class ObjectClosedError extends KvtError {
  override name = 'ObjectClosedError';
  constructor(message: string, context?: KvtErrorContext) {
    super('OBJECT_CLOSED', message, context);
  }
}

/**
 * The controller or a segment store could not be reached within the retries and the deadline.
 * `maybeApplied` is true when an update may have reached the store before the failure: its outcome
 * is then unknown (read the key to find out).
 */
export class UnavailableError extends KvtError {
  override name = 'UnavailableError';
  /** True when an update may have been applied despite the error. */
  readonly maybeApplied: boolean;
  constructor(message: string, context?: KvtErrorContext & { maybeApplied?: boolean; code?: 'UNAVAILABLE' | 'OVERLOADED' }) {
    super(context?.code ?? 'UNAVAILABLE', message, context);
    this.maybeApplied = context?.maybeApplied ?? false;
  }
}

/**
 * A segment store refused the request without running it, through every retry, because it already
 * held as many requests as its `--max-in-flight-mb` allows (code `OVERLOADED`). An
 * {@link UnavailableError}, so code that handles unavailability handles this too; catch it apart to
 * back off harder or shed load. `maybeApplied` is true only when an earlier attempt's outcome is unknown.
 */
export class OverloadedError extends UnavailableError {
  override name = 'OverloadedError';
  constructor(message: string, context?: KvtErrorContext & { maybeApplied?: boolean }) {
    super(message, { ...context, code: 'OVERLOADED' });
  }
}

/** A document edit conflicts with the current revision (document layer). No stack frames (see {@link KvtError.withoutStack}). */
export class DocumentConflictError extends KvtError {
  static override readonly withoutStack = true;
  override name = 'DocumentConflictError';
  constructor(message: string, context?: KvtErrorContext) {
    super('DOCUMENT_CONFLICT', message, context);
  }
}

/** The caller is not authenticated (security layer). */
export class UnauthenticatedError extends KvtError {
  override name = 'UnauthenticatedError';
  constructor(message: string, context?: KvtErrorContext) {
    super('UNAUTHENTICATED', message, context);
  }
}

/** The caller may not perform the operation (security layer). */
export class PermissionDeniedError extends KvtError {
  override name = 'PermissionDeniedError';
  constructor(message: string, context?: KvtErrorContext) {
    super('PERMISSION_DENIED', message, context);
  }
}

/**
 * An unexpected failure of a server (code `INTERNAL`) or an answer the client does not understand
 * (code `SERVICE_ERROR`); `cause` holds the original.
 */
export class ServiceError extends KvtError {
  override name = 'ServiceError';
  constructor(message: string, context?: KvtErrorContext & { code?: 'INTERNAL' | 'SERVICE_ERROR' | 'SEGMENT_NOT_FOUND' }) {
    super(context?.code ?? 'INTERNAL', message, context);
  }
}
