/**
 * The error the servers' domain code raises: a stable kvt code (the contract, proto/error-codes.ts), a
 * message naming the field and the limit, the index of the offending item. No gRPC here: storage
 * raises it too, and the services map it to a status in one place (status.ts).
 */
import { ErrorCode, ErrorCodes } from '../proto/error-codes';

/**
 * A domain error a server reports to its caller: a stable code, a message, an optional item index.
 * It carries no stack trace: it is an answer, mapped to a status and never logged as a crash, and
 * capturing one cost more than the rest of a failed condition (6% of a store's busy time in bench
 * W3, where most read-modify-writes lose their condition at least once).
 */
export class KvtFault extends Error {
  override readonly name = 'KvtFault';
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Index of the offending modification / key in the request, -1 when none. */
    readonly index = -1,
    /** When known, how long until the same call could succeed (sent as the `kvt-retry-after-ms` trailer). */
    readonly retryAfterMs?: number,
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/** The message of anything thrown (an Error's message, else its string form). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Shorthand for `new KvtFault('INVALID_ARGUMENT', message, index)`. */
export function invalidArgument(message: string, index = -1): KvtFault {
  return new KvtFault(ErrorCodes.INVALID_ARGUMENT, message, index);
}
