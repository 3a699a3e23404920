/**
 * The store-wide bound on the data requests a segment store holds at once, as Cassandra's
 * `native_transport_max_request_data_in_flight` or etcd's "too many requests": every Update,
 * Execute, Get, Iterate and Scan call, and every ExecuteStream message, counts with its size on the
 * wire from its arrival, and its answer with its own size from when it is encoded, until the answer
 * is written out (or the call ends, or the stream breaks; a unary call's request stops counting when
 * its answer is ready, see bounded-calls.ts). When the disk stalls, updates wait for their group
 * commit holding their requests, and a client that does not read leaves its answers waiting; without
 * this bound, clients that keep sending (every unary call, and every stream up to its own 64 MiB)
 * would grow the store's memory without end. A request that would take the total past the bound is
 * refused with OVERLOADED (gRPC status UNAVAILABLE) without running, so clients retry it after a
 * backoff, even a conditional update, without asking the controller for new routing; a request
 * arriving while nothing else is held always runs, whatever its size.
 */
import { ErrorCodes } from '../../proto/error-codes';
import { KvtFault } from '../../server-kit/fault';

const MIB = 1024 * 1024;

/** Default of `--max-in-flight-mb`. */
export const DEFAULT_MAX_IN_FLIGHT_MB = 256;

export class InFlightBudget {
  /** Bytes held now. */
  private held = 0;

  /**
   * @param limitBytes the bound
   * @param onRefused told of every refusal (the server logs them, rate-limited)
   */
  constructor(
    readonly limitBytes: number,
    private readonly onRefused: (what: string, bytes: number) => void = () => undefined,
  ) {}

  /** Takes `bytes` for a request of kind `what`, or returns the fault to refuse it with (nothing taken). */
  acquire(bytes: number, what: string): KvtFault | undefined {
    if (this.held > 0 && this.held + bytes > this.limitBytes) {
      this.onRefused(what, bytes);
      return new KvtFault(
        ErrorCodes.OVERLOADED,
        `segment store is overloaded: requests of ${mib(this.held)} MiB are in flight and this ${what} of ${mib(bytes)} MiB ` +
          `would pass the limit of ${mib(this.limitBytes)} MiB (--max-in-flight-mb); it was not run, try again`,
      );
    }
    this.held += bytes;
    return undefined;
  }

  /** Takes `bytes` that are held already and cannot be refused (an answer ready to be sent). */
  charge(bytes: number): void {
    this.held += bytes;
  }

  /** Gives back what {@link acquire} or {@link charge} took. */
  release(bytes: number): void {
    this.held -= bytes;
  }
}

/** MiB with up to two decimals. */
function mib(bytes: number): string {
  return String(Math.round((bytes / MIB) * 100) / 100);
}
