/**
 * Sends one table's requests to the right segment store: resolves the route from the cached routing,
 * goes through the coalescer (or a direct call for Iterate), and retries. Retry rules:
 * - SEGMENT_NOT_FOUND (of a sub-request, or of an Iterate or Scan call): the routing may be stale;
 *   refresh it once and retry (if the controller says the table is gone, TableNotFoundError).
 * - UNAVAILABLE / connection failure / a refused or unreachable controller: refresh the routing (the
 *   store may be back on a new address) and retry with backoff, at most `maxRetries` times and never
 *   past the deadline; updates only when the request surely was not sent. Why not an unconditional
 *   put sent again: applied twice, with another client's write in between, it would overwrite that
 *   write (even a conditional one made at the version the first application produced) and show
 *   readers the first value, then the other, then the first again.
 */
import type * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER } from '../../proto/error-codes';
import type { IterateRequestInput, Routing, ScanRequestInput, ScanResponse, WireError } from '../../proto/messages';
import type { ClientSubResponse as SubResponse } from './wire-decoder';
import { KvtError, ObjectClosedError, OverloadedError, TableNotActiveError, UnavailableError } from '../errors';
import { Coalescer } from './coalescer';
import { callUnary, Connections } from './connections';
import { backoffMs, isRefusedUnrun, isTransient, outcomeUnknown, RetryOptions, sleep, surelyNotSent } from './retry';
import { Route, RoutingCache, RoutingTable } from './routing';
import { ErrorSite, toKvtError } from './status-to-error';
import { ClientSubRequest, encodeIterateRequest } from './wire-codec';

/** How one request may be retried and how to name its keys in errors. */
export interface RequestPolicy {
  /** The caller's key at a batch index (to name the failing key). */
  keyAt?: (index: number) => unknown;
  /**
   * True for reads: retried after any transient failure, and a failed read never leaves anything
   * applied. An update is sent again only when it surely did not reach the store.
   */
  read?: boolean;
}

/** Settings of a table transport. */
export interface TransportSettings {
  timeoutMs: number;
  retry: RetryOptions;
  logger?: { debug?(msg: string, fields?: Record<string, unknown>): void };
}

/** Iterator pages of at most this many items travel in coalesced Execute calls (see TableTransport.read). */
export const MAX_COALESCED_PAGE_ITEMS = 64;

/**
 * Thrown by a request's route pick when the routing it finds no longer fits how the request was put
 * together (keys grouped by partition under another partition count: the table was deleted and created
 * again). Not retried here: the caller regroups the keys with the new routing.
 */
export class StaleGrouping extends Error {
  constructor(readonly partitionCount: number) {
    super(`the table now has ${partitionCount} partitions; regroup the request`);
  }
}

/** A failed sub-response, thrown so that one catch handles wire and transport errors alike. */
class SubError {
  constructor(readonly error: WireError) {}
}

/** Routes and sends the requests of one table. */
export class TableTransport {
  readonly routing: RoutingCache;
  private closed = false;

  constructor(
    /** `scope/table`. */
    readonly tableName: string,
    private readonly scope: string,
    private readonly table: string,
    private readonly connections: Connections,
    private readonly coalescer: Coalescer,
    private readonly settings: TransportSettings,
    /** A routing cache shared with other handles of the same table, if any. */
    routing?: RoutingCache,
  ) {
    this.routing = routing ?? new RoutingCache(() => this.fetchRouting());
  }

  close(): void {
    this.closed = true;
  }

  /**
   * The routing (fetched if needed), for callers that spread work over partitions; `fresh`: asked of
   * the controller now, unless it cannot be reached (then the cached routing serves).
   */
  async routingTable(fresh = false): Promise<RoutingTable> {
    if (fresh) await beforeDeadline(this.routing.refresh(), Date.now() + this.settings.timeoutMs, this.tableName).catch(() => undefined);
    let table: RoutingTable | undefined;
    await this.withRetries(
      (t) => {
        table = t;
        return t.allRoutes()[0];
      },
      async () => undefined,
      { read: true },
    );
    return table!;
  }

  /** Sends one Update, Get or Iterate sub-request for the partition `pick` selects; resolves its successful sub-response. */
  execute(pick: (t: RoutingTable) => Route, build: (segmentId: string) => ClientSubRequest, policy: RequestPolicy): Promise<{ response: SubResponse; segmentId: string }> {
    return this.withRetries(
      pick,
      (route, deadline) =>
        this.coalescer.submit(route.address, build(route.segmentId), deadline).then((response) => {
          if (response.error) throw new SubError(response.error);
          return { response, segmentId: route.segmentId };
        }),
      policy,
    );
  }

  /**
   * One read-only call (`Iterate` or `Scan`) on the partition `pick` selects, retried like any read;
   * resolves the answer (Iterate: the undecoded `IterateResponse`, see decodeIteratePage) and the
   * route it came from (whose segment id the versions belong to). A page of at most
   * {@link MAX_COALESCED_PAGE_ITEMS} items goes with the coalesced calls (as the first page of a
   * layer's reads of one key or a few); a larger one over the store's iterator stream, so that its
   * up to 2 MiB never hold back the small answers of the calls around it.
   */
  read<M extends 'Iterate' | 'Scan'>(
    method: M,
    pick: (t: RoutingTable) => Route,
    build: (segmentId: string) => M extends 'Iterate' ? IterateRequestInput : ScanRequestInput,
  ): Promise<{ response: M extends 'Iterate' ? Buffer : ScanResponse; route: Route }> {
    type Res = M extends 'Iterate' ? Buffer : ScanResponse;
    return this.withRetries(
      pick,
      (route, deadline): Promise<{ response: Res; route: Route }> => {
        const streams = this.coalescer.streams;
        if (method === 'Iterate') {
          const request = build(route.segmentId) as IterateRequestInput;
          if ((request.maxItems ?? 0) <= MAX_COALESCED_PAGE_ITEMS) {
            // A small page is a sub-request: the pages of concurrent iterators travel together with gets and updates.
            return this.coalescer.submit(route.address, { iterate: encodeIterateRequest(request) }, deadline).then((response) => {
              if (response.error) throw new SubError(response.error);
              return { response: (response.iterate ?? Buffer.alloc(0)) as Res, route };
            });
          }
          if (streams) {
            return streams.iterate(route.address, request, deadline).then(
              (page) => ({ response: page as Res, route }),
              (err: unknown) => {
                // A page's own error arrives as a wire error, as a failed sub-request's does.
                throw isWire(err) ? new SubError(err) : err;
              },
            );
          }
        }
        const store = this.connections.store(route.address);
        return callUnary<unknown, Res>(store, method, build(route.segmentId), deadline).then((response) => ({ response, route }));
      },
      { read: true },
    );
  }

  /**
   * `attempt` on the route `pick` gives, retried as the module header says. The first attempt is made
   * at once when the routing is cached (the common case: no promise of its own, no await before the
   * request is queued); only a failure goes on to the retry loop.
   */
  private withRetries<T>(pick: (t: RoutingTable) => Route, attempt: (route: Route, deadline: number) => Promise<T>, policy: RequestPolicy): Promise<T> {
    const deadline = Date.now() + this.settings.timeoutMs;
    const routing = this.closed ? undefined : this.routing.get();
    if (routing === undefined || routing instanceof Promise) return this.retrying(pick, attempt, policy, deadline);
    let route: Route | undefined;
    try {
      route = pick(routing);
      return attempt(route, deadline).catch((err: unknown) => this.retrying(pick, attempt, policy, deadline, { err, route }));
    } catch (err) {
      return this.retrying(pick, attempt, policy, deadline, { err, route });
    }
  }

  /** The retry loop of withRetries, from its first attempt or after it failed (`failed`). */
  private async retrying<T>(
    pick: (t: RoutingTable) => Route,
    attempt: (route: Route, deadline: number) => Promise<T>,
    policy: RequestPolicy,
    deadline: number,
    failed?: { err: unknown; route: Route | undefined },
  ): Promise<T> {
    let refreshedForSegment = false;
    let staleGeneration: string | undefined;
    // Sticky across attempts: once any attempt may have reached a store, a later "surely not sent"
    // failure does not make the outcome known again.
    let maybeApplied = false;
    for (let tries = 0; ; tries++) {
      let route: Route | undefined;
      try {
        if (failed) {
          route = failed.route;
          throw failed.err;
        }
        this.checkOpen();
        const routing = staleGeneration === undefined ? await this.routing.get() : await beforeDeadline(this.routing.refresh(staleGeneration), deadline, this.tableName);
        staleGeneration = undefined;
        route = pick(routing);
        return await attempt(route, deadline);
      } catch (err) {
        failed = undefined;
        this.checkOpen();
        if (err instanceof StaleGrouping) throw err;
        if (kvtCodeOf(err) === 'SEGMENT_NOT_FOUND' && !refreshedForSegment) {
          refreshedForSegment = true;
          staleGeneration = route?.generation ?? '';
          continue;
        }
        const cause = err instanceof SubError ? err.error : err;
        // An update may have been applied when it got as far as a store and was not explicitly refused.
        const unknown = !policy.read && route !== undefined && outcomeUnknown(cause);
        maybeApplied ||= unknown;
        const site = { table: this.tableName, segment: route?.segmentId, keyAt: policy.keyAt, maybeApplied };
        if (!isRetryable(cause, policy.read === true)) throw this.counted(finalError(cause, site, unknown));
        const wait = backoffMs(tries + 1, this.settings.retry);
        if (tries >= this.settings.retry.maxRetries || Date.now() + wait >= deadline) throw this.counted(finalError(cause, site, unknown));
        this.settings.logger?.debug?.('kvt client retrying', { table: this.tableName, segment: route?.segmentId, attempt: tries + 1, waitMs: wait });
        await sleep(wait);
        // A busy store is still the right one: only other failures send the next attempt to the controller.
        staleGeneration = kvtCodeOf(err) === 'OVERLOADED' ? undefined : (route?.generation ?? '');
      }
    }
  }

  /** `err`, counted in the client's metrics (if the application gave a registry). */
  private counted(err: KvtError): KvtError {
    this.coalescer.metrics.error(err.code);
    return err;
  }

  private checkOpen(): void {
    if (this.closed) throw new ObjectClosedError(`table ${this.tableName} is closed`, { table: this.tableName });
  }

  private async fetchRouting(): Promise<Routing> {
    const deadline = Date.now() + this.settings.timeoutMs;
    const routing = await callUnary<{ scope: string; table: string }, Routing>(this.connections.controller(), 'GetRouting', { scope: this.scope, table: this.table }, deadline);
    if (!routing.partitions || routing.partitions.length === 0) {
      throw new TableNotActiveError(`table ${this.tableName} has no partitions yet`, { table: this.tableName });
    }
    return routing;
  }
}

/**
 * The error a caller gets: the typed error of `cause`; but an update whose call failed as a whole
 * after it may have reached the store (`unknown`, see outcomeUnknown) is an UnavailableError with
 * maybeApplied, whatever the status (a stream broken by RESOURCE_EXHAUSTED or INTERNAL says nothing
 * about the update itself).
 */
function finalError(cause: unknown, site: ErrorSite, unknown: boolean): KvtError {
  const typed = toKvtError(cause, site);
  if (typed instanceof UnavailableError) {
    // An UnavailableError made on the client (a deadline passed before sending, no routing in time)
    // knows nothing of earlier attempts: one of those may have reached the store.
    if (typed.maybeApplied || !site.maybeApplied) return typed;
    const context = { cause: typed.cause ?? cause, table: site.table, segment: site.segment, maybeApplied: true };
    return typed instanceof OverloadedError ? new OverloadedError(typed.message, context) : new UnavailableError(typed.message, context);
  }
  if (!unknown) return typed;
  return new UnavailableError(`the call to the segment store failed after the update was sent, so it may have been applied: ${typed.message}`, {
    cause,
    table: site.table,
    segment: site.segment,
    maybeApplied: true,
  });
}

/**
 * `routing`, or UNAVAILABLE once `deadline` passes first: a refresh is shared by every caller and has
 * its own deadline, which a caller's retry must not outlive. (The refresh goes on for the others.)
 */
function beforeDeadline(routing: Promise<RoutingTable>, deadline: number, table: string): Promise<RoutingTable> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UnavailableError(`no routing of table ${table} from the controller within the deadline`, { table })), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([routing, late]).finally(() => clearTimeout(timer));
}

/** Transient failures are retried: those of reads always, those of updates only when surely not sent. */
function isRetryable(err: unknown, read: boolean): boolean {
  if (err instanceof KvtError) return false;
  if (isWire(err)) return isRefusedUnrun(err.code);
  if (!isTransient(err)) return false;
  return read || surelyNotSent(err);
}

/**
 * The kvt code of a failed sub-request, of a stream message the store refused whole (a wire error), or
 * of a failed call (its trailer: Iterate and Scan calls).
 */
function kvtCodeOf(err: unknown): string | undefined {
  if (err instanceof SubError) return err.error.code;
  if (isWire(err)) return err.code;
  const trailer = (err as Partial<grpc.ServiceError>)?.metadata?.get?.(ERROR_CODE_TRAILER)?.[0];
  return typeof trailer === 'string' ? trailer : undefined;
}

function isWire(err: unknown): err is WireError {
  return typeof err === 'object' && err !== null && typeof (err as WireError).code === 'string' && 'index' in err && !(err instanceof Error);
}
