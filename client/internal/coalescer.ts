/**
 * Coalescing (DESIGN §3): concurrent operations bound for one segment store travel together in one
 * `Execute` RPC. Adaptive batching: while fewer than `maxInFlight` Execute calls to a store are
 * outstanding, whatever is queued goes out at once (after the current microtasks, so operations
 * started together share the call); otherwise requests queue until a call returns, so the batch size
 * grows with the load and a lone request waits for nothing. A large queue is shared among the free
 * calls (see `splitBytes`). Single-segment Gets queued together are merged into one multi-key Get
 * sub-request; a Get the store answered for its first keys only (its answers hold at most 32 MiB of
 * keys and values, see GetResponse) asks again for the rest, so callers always get every entry.
 *
 * Reads and updates coalesce apart, each in its own lane of a store (its own queue and its own
 * `maxInFlight` calls): an update's answer waits for its group commit's disk sync (several ms, tens
 * under load), and a get or iterator page that shared its call, or queued behind update calls filling
 * the store's calls in flight, waited as long. With 10% updates among 1,000 page reads a second (bench
 * revisions' mixed load) that raised the reads' p99 from 12 to 30 ms. Both lanes travel on the same
 * stream; operations started concurrently have no order between them, so nothing else changes.
 */
import * as grpc from '@grpc/grpc-js';
import { MAX_GET_KEYS, MAX_MESSAGE_BYTES } from '../../proto/limits';
import type { WireError } from '../../proto/messages';
import { InvalidArgumentError, ObjectClosedError, ServiceError, UnavailableError } from '../errors';
import { ClientMetrics, NO_CLIENT_METRICS } from './client-metrics';
import { callUnary, Connections } from './connections';
import { ExecuteStreams } from './execute-streams';
import { ClientExecuteRequest, ClientGetRequest, ClientSubRequest, subRequestBytes } from './wire-codec';
import type { ClientExecuteResponse as ExecuteResponse, ClientSubResponse as SubResponse } from './wire-decoder';

/** Tuning of the coalescer. */
export interface CoalescerOptions {
  /** Execute calls in flight per store and lane (reads, updates) before requests queue up. @default 2 */
  maxInFlight: number;
  /** Sub-requests in one Execute call. @default 512 */
  maxSubRequests: number;
  /**
   * Encoded bytes of the sub-requests in one Execute call: keys, values, the key family repeated with
   * every modification and get key, framing. A batch larger than this goes alone. Never more than
   * {@link MAX_EXECUTE_BYTES} whatever is set. @default 16 MiB
   */
  maxBytes: number;
  /**
   * With at least this many encoded bytes queued per free call, the queue is shared evenly among
   * the free calls instead of all going out in one (`Infinity`: never). Why: when every caller's
   * batch travels in one call, the store writes them all in one flush and all the callers then wait
   * together, each for the others' next batches to be staged, while the disk idles; two calls of half
   * the queue let the store stage one while it writes the other. Small operations stay in one call,
   * where a second call would only add its own cost. (Bench W4, one segment store: +10–14%.)
   * @default 32 KiB
   */
  splitBytes: number;
  /**
   * Send Execute calls (and iterator pages) as messages of `ExecuteStream`s, two per store (cheaper
   * per call), rather than as unary `Execute` and `Iterate` calls. @default true
   */
  streams: boolean;
}

/** The defaults of {@link CoalescerOptions}. */
export function defaultCoalescerOptions(): CoalescerOptions {
  return { maxInFlight: 2, maxSubRequests: 512, maxBytes: 16 * 1024 * 1024, splitBytes: 32 * 1024, streams: true };
}

/**
 * How many of the `queued` operations (`queuedBytes` key + value bytes) the next call takes while
 * `free` calls may still be sent: an even share when the queue is large enough to split (see
 * {@link CoalescerOptions.splitBytes}), otherwise as many as one call holds.
 */
export function callShare(queued: number, queuedBytes: number, free: number, options: CoalescerOptions): number {
  if (free < 2 || queued < free || queuedBytes < options.splitBytes * free) return options.maxSubRequests;
  return Math.min(options.maxSubRequests, Math.ceil(queued / free));
}

export interface Pending {
  sub: ClientSubRequest;
  bytes: number;
  deadline: number;
  resolve: (response: SubResponse) => void;
  reject: (err: unknown) => void;
  /** Set once rejected at its deadline (its call may still answer; see {@link Coalescer.sweep}). */
  expired: boolean;
}

/**
 * The most an Execute call carries: the gRPC message limit less room for a stream message's id. A call
 * over it would be refused by grpc-js, and on a stream that cancels every call in flight on it.
 */
export const MAX_EXECUTE_BYTES = MAX_MESSAGE_BYTES - 1024;

/**
 * Iterator pages in one Execute call: each answers up to 2 MiB of keys and values (MAX_ITERATOR_PAGE_BYTES),
 * so that these and the Gets' 32 MiB (MAX_GET_ANSWER_BYTES) stay well within one message.
 */
export const MAX_PAGES_PER_CALL = 8;

/** How often queued and in-flight requests are checked against their own deadlines. */
const DEADLINE_SWEEP_MS = 25;

/**
 * The failure of a request that alone is over {@link MAX_EXECUTE_BYTES}: nothing is sent. (The table's
 * own requests never are: updates are bounded by the batch limits and gets are split by size.)
 */
function tooLarge(bytes: number): InvalidArgumentError {
  return new InvalidArgumentError(`request is ${bytes} bytes encoded; the maximum is ${MAX_EXECUTE_BYTES}`);
}

/** The failure of a request whose deadline passed before it could be sent (nothing was applied). */
function notSent(address: string): UnavailableError {
  return new UnavailableError(`deadline passed before the request could be sent to ${address}`);
}

/**
 * The failure of a request whose deadline passed while its call was in flight: shaped as the gRPC
 * status DEADLINE_EXCEEDED (no kvt code), so that an update's outcome counts as unknown (retry.ts).
 */
function deadlineExceeded(address: string): Error {
  const details = `deadline passed while the call to ${address} was in flight`;
  return Object.assign(new Error(`${grpc.status.DEADLINE_EXCEEDED} DEADLINE_EXCEEDED: ${details}`), { code: grpc.status.DEADLINE_EXCEEDED, details, metadata: new grpc.Metadata() });
}

/** Members of one wire sub-request: one update, or several merged gets (with their key offsets). */
export interface Slot {
  members: Pending[];
  offsets: number[] | undefined;
}

/** Which operations a queue carries: reads (gets, iterator pages) never share a call with updates. */
type Lane = 'read' | 'update';

interface StoreQueue {
  address: string;
  queue: Pending[];
  /** The members of the calls in flight (at most `maxInFlight` calls: a short array). */
  sending: Pending[][];
  /** Key + value bytes of the queued operations. */
  bytes: number;
  inFlight: number;
  scheduled: boolean;
}

/** Sends sub-requests to stores in coalesced `Execute` calls. */
export class Coalescer {
  /** Counters for tests and benchmarks: Execute calls, wire sub-requests, operations carried. */
  readonly stats = { calls: 0, subRequests: 0, operations: 0 };
  /** The queues of each store address: its reads' and its updates'. */
  private readonly stores = new Map<string, Record<Lane, StoreQueue>>();
  /** Fails requests at their own deadline, queued or in flight; runs only while some are. */
  private sweeper: NodeJS.Timeout | undefined;
  /** The streams Execute calls travel on (undefined with `streams: false`); iterators use them too. */
  readonly streams: ExecuteStreams | undefined;
  private closed = false;

  constructor(
    private readonly connections: Connections,
    private readonly options: CoalescerOptions,
    /** Where calls, sub-requests and the table operations' errors are counted (client-metrics.ts). */
    readonly metrics: ClientMetrics = NO_CLIENT_METRICS,
  ) {
    if (options.streams !== false) this.streams = new ExecuteStreams(connections);
  }

  /**
   * Queues `sub` for the store at `address`; resolves with its own sub-response (which may hold an
   * Error) or rejects with the transport error of the whole call.
   */
  submit(address: string, sub: ClientSubRequest, deadline: number): Promise<SubResponse> {
    const answer = this.enqueue(address, sub, deadline);
    const get = sub.get;
    return get ? answer.then((response) => this.completeGet(address, get, response, deadline)) : answer;
  }

  /**
   * The answer to `get` with every key: as it came when whole (most answers; no promise of its own),
   * else completed by asking again for the keys it left out.
   */
  private completeGet(address: string, get: ClientGetRequest, response: SubResponse, deadline: number): SubResponse | Promise<SubResponse> {
    const first = response.get?.entries;
    if (response.error || !first || first.length >= get.keys.length) return response;
    return this.askForRest(address, get, first, deadline);
  }

  /** Asks again, until `deadline`, for the keys of `get` that its first answer (`first`) left out. */
  private async askForRest(address: string, get: ClientGetRequest, first: NonNullable<NonNullable<SubResponse['get']>['entries']>, deadline: number): Promise<SubResponse> {
    const entries = first.slice();
    while (entries.length < get.keys.length) {
      const keys = get.keys.slice(entries.length);
      const more = await this.enqueue(address, { get: { segmentId: get.segmentId, keys } }, deadline);
      if (more.error) return { error: { ...more.error, index: more.error.index >= 0 ? more.error.index + entries.length : -1 } };
      for (const e of more.get?.entries ?? []) entries.push(e);
    }
    return { get: { entries: entries.length > get.keys.length ? entries.slice(0, get.keys.length) : entries } };
  }

  private enqueue(address: string, sub: ClientSubRequest, deadline: number): Promise<SubResponse> {
    if (this.closed) return Promise.reject(new ObjectClosedError('the client was closed'));
    const bytes = subRequestBytes(sub);
    if (bytes > MAX_EXECUTE_BYTES) return Promise.reject(tooLarge(bytes));
    let lanes = this.stores.get(address);
    if (!lanes) {
      const lane = (): StoreQueue => ({ address, queue: [], sending: [], bytes: 0, inFlight: 0, scheduled: false });
      lanes = { read: lane(), update: lane() };
      this.stores.set(address, lanes);
    }
    const queue = sub.update ? lanes.update : lanes.read;
    return new Promise<SubResponse>((resolve, reject) => {
      queue.queue.push({ sub, bytes, deadline, resolve, reject, expired: false });
      queue.bytes += bytes;
      this.schedule(queue);
      this.sweeper ??= setInterval(() => this.sweep(), DEADLINE_SWEEP_MS).unref();
    });
  }

  /**
   * Fails every request whose own deadline passed: a queued one as not sent, one in flight as
   * DEADLINE_EXCEEDED (its call goes on for the others, whose deadlines may be later). Without this a
   * request queued behind busy calls, or carried by a call with a later deadline, outlived its own.
   */
  private sweep(): void {
    const now = Date.now();
    let waiting = 0;
    for (const q of this.queues()) {
      if (q.queue.some((p) => p.deadline <= now)) {
        const kept: Pending[] = [];
        for (const p of q.queue) {
          if (p.deadline > now) kept.push(p);
          else {
            q.bytes -= p.bytes;
            p.expired = true;
            p.reject(notSent(q.address));
          }
        }
        q.queue = kept;
      }
      for (const members of q.sending) {
        for (const p of members) {
          if (p.expired || p.deadline > now) continue;
          p.expired = true;
          p.reject(deadlineExceeded(q.address));
        }
      }
      waiting += q.queue.length + q.sending.length;
    }
    if (waiting === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Fails everything still queued with ObjectClosedError; calls in flight fail with CANCELLED. */
  close(): void {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.streams?.close();
    for (const q of this.queues()) {
      q.bytes = 0;
      for (const p of q.queue.splice(0)) p.reject(new ObjectClosedError('the client was closed'));
    }
  }

  private *queues(): IterableIterator<StoreQueue> {
    for (const lanes of this.stores.values()) {
      yield lanes.read;
      yield lanes.update;
    }
  }

  private schedule(q: StoreQueue): void {
    if (q.scheduled || q.inFlight >= this.options.maxInFlight || q.queue.length === 0) return;
    q.scheduled = true;
    // Idle store: flush after the current microtasks, so that a burst of operations started together
    // still shares one call while a lone operation waits for nothing. Busy store: wait one turn of the
    // event loop, letting the completions of the call that just returned add their follow-ups.
    if (q.inFlight === 0) queueMicrotask(() => this.flush(q));
    else setImmediate(() => this.flush(q));
  }

  private flush(q: StoreQueue): void {
    q.scheduled = false;
    while (q.queue.length > 0 && q.inFlight < this.options.maxInFlight && !this.closed) {
      this.send(q, this.take(q, callShare(q.queue.length, q.bytes, this.options.maxInFlight - q.inFlight, this.options)));
    }
  }

  /** Removes the next batch (at most `count` operations) from the queue, failing members whose deadline already passed. */
  private take(q: StoreQueue, count: number): Pending[] {
    const now = Date.now();
    const batch: Pending[] = [];
    const maxBytes = Math.min(this.options.maxBytes, MAX_EXECUTE_BYTES);
    let bytes = 0;
    let pages = 0;
    while (q.queue.length > 0 && batch.length < count) {
      const next = q.queue[0];
      if (batch.length > 0 && bytes + next.bytes > maxBytes) break;
      if (next.sub.iterate && pages >= MAX_PAGES_PER_CALL) break;
      q.queue.shift();
      q.bytes -= next.bytes;
      if (next.deadline <= now) {
        next.reject(notSent(q.address));
        continue;
      }
      batch.push(next);
      bytes += next.bytes;
      if (next.sub.iterate) pages++;
    }
    return batch;
  }

  private send(q: StoreQueue, batch: Pending[]): void {
    if (batch.length === 0) return;
    const { request, slots } = buildRequest(batch);
    let deadline = 0;
    for (const p of batch) deadline = Math.max(deadline, p.deadline);
    q.inFlight++;
    q.sending.push(batch);
    this.stats.calls++;
    this.stats.subRequests += request.requests.length;
    this.stats.operations += batch.length;
    this.metrics.executeCall(request.requests.length, batch.length);
    const call = this.streams ? this.streams.execute(q.address, request, deadline) : callUnary<ClientExecuteRequest, ExecuteResponse>(this.connections.store(q.address), 'Execute', request, deadline);
    call.then(
      (response) => {
        q.inFlight--;
        q.sending.splice(q.sending.indexOf(batch), 1);
        deliver(slots, response);
        this.schedule(q);
      },
      (err: unknown) => {
        q.inFlight--;
        q.sending.splice(q.sending.indexOf(batch), 1);
        for (const p of batch) if (!p.expired) p.reject(err);
        this.schedule(q);
      },
    );
  }
}

/** Builds one ExecuteRequest, merging single-segment Gets into multi-key Gets. */
export function buildRequest(batch: Pending[]): { request: ClientExecuteRequest; slots: Slot[] } {
  const requests: ClientSubRequest[] = [];
  const slots: Slot[] = [];
  let gets: Map<string, number> | undefined;
  for (const p of batch) {
    const get = p.sub.get;
    if (!get) {
      requests.push(p.sub);
      slots.push({ members: [p], offsets: undefined });
      continue;
    }
    gets ??= new Map();
    const at = gets.get(get.segmentId);
    const merged = at === undefined ? undefined : (requests[at].get as ClientGetRequest);
    if (at !== undefined && merged && merged.keys.length + get.keys.length <= MAX_GET_KEYS) {
      const slot = slots[at];
      if (slot.offsets === undefined) {
        // First merge into this slot: copy so the caller's request object stays untouched.
        requests[at] = { get: { segmentId: merged.segmentId, keys: merged.keys.slice() } };
        slot.offsets = [0];
      }
      slot.offsets.push((requests[at].get as ClientGetRequest).keys.length);
      for (const key of get.keys) (requests[at].get as ClientGetRequest).keys.push(key);
      slot.members.push(p);
      continue;
    }
    gets.set(get.segmentId, requests.length);
    requests.push(p.sub);
    slots.push({ members: [p], offsets: undefined });
  }
  return { request: { requests }, slots };
}

/** Hands each member its own sub-response (splitting merged Gets back apart). */
export function deliver(slots: Slot[], response: ExecuteResponse): void {
  const responses = response.responses ?? [];
  if (responses.length !== slots.length) {
    const err = new ServiceError(`the store answered ${responses.length} sub-requests for ${slots.length}`, { code: 'SERVICE_ERROR' });
    for (const slot of slots) for (const p of slot.members) p.reject(err);
    return;
  }
  for (let i = 0; i < slots.length; i++) {
    const { members, offsets } = slots[i];
    const r = responses[i];
    if (offsets === undefined) {
      members[0].resolve(r);
      continue;
    }
    if (!r.error && !r.get) {
      // An answer of the wrong shape: its members fail rather than wait forever.
      const err = new ServiceError(`the store answered sub-response ${i} of a merged Get with neither entries nor error`, { code: 'SERVICE_ERROR' });
      for (const p of members) p.reject(err);
      continue;
    }
    for (let m = 0; m < members.length; m++) {
      const from = offsets[m];
      const count = members[m].sub.get!.keys.length;
      members[m].resolve(r.error ? { error: shiftError(r.error, from, count) } : { get: { entries: r.get!.entries.slice(from, from + count) } });
    }
  }
}

/** The error of a merged Get as seen by one member: the index only when it falls in its keys. */
function shiftError(err: WireError, from: number, count: number): WireError {
  const inside = err.index >= from && err.index < from + count;
  return { ...err, index: inside ? err.index - from : -1 };
}
