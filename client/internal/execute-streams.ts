/**
 * Execute calls and iterator pages over long-lived `ExecuteStream`s, two per segment store (see
 * segmentstore.proto): each call is one message under an id, answered under the same id. A message
 * costs a fraction of a unary call (no HTTP/2 stream, headers, trailers or call object of its own),
 * which is most of what a small coalesced Execute costs the client.
 *
 * Failures look like those of the unary calls, so retries and error mapping do not change (an
 * Iterate's own error arrives as a wire error, as a failed sub-request's does):
 * - the stream breaks (store gone, connection lost, channel closed): every call waiting on it fails
 *   with the stream's gRPC status (UNAVAILABLE "No connection established" when it never connected,
 *   which tells the retry logic nothing was sent; CANCELLED when the client closed);
 * - a call's deadline passes: it fails with DEADLINE_EXCEEDED (a late answer is dropped);
 * - the store refuses a message (stopping) or ends the stream while calls wait: they fail with a
 *   wire error UNAVAILABLE: the store ran none of them, so any update may be retried.
 * The next call after a break opens a new stream.
 */
import * as grpc from '@grpc/grpc-js';
import type { IterateRequestInput, WireError } from '../../proto/messages';
import type { Connections, ServiceClient } from './connections';
import type { ClientExecuteRequest, ClientExecuteStreamRequest } from './wire-codec';
import type { ClientExecuteResponse, ClientStreamResponse } from './wire-decoder';

type Stream = grpc.ClientDuplexStream<ClientExecuteStreamRequest, ClientStreamResponse>;

/** A request of a stream message, without its id. */
type StreamRequest = { request: ClientExecuteRequest; iterate?: undefined } | { iterate: IterateRequestInput; request?: undefined };

interface Waiting {
  resolve: (answer: ClientStreamResponse) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
}

/** The status error a unary call fails with when its deadline passes. */
function deadlineExceeded(ms: number): grpc.ServiceError {
  const details = `Deadline exceeded after ${ms} ms (on an ExecuteStream)`;
  return Object.assign(new Error(`${grpc.status.DEADLINE_EXCEEDED} DEADLINE_EXCEEDED: ${details}`), {
    code: grpc.status.DEADLINE_EXCEEDED,
    details,
    metadata: new grpc.Metadata(),
  });
}

function notRun(message: string): WireError {
  return { code: 'UNAVAILABLE', message, index: -1, segmentId: '' };
}

/** The stream to one store, opened on first use and again after a break. */
class StoreStream {
  private stream: Stream | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private lastId = 0;

  constructor(private readonly client: () => ServiceClient) {}

  /** Sends `message`; resolves its answer (rejects with its error, or the stream's). */
  send(message: StreamRequest, deadline: number): Promise<ClientStreamResponse> {
    const ms = deadline - Date.now();
    if (ms <= 0) return Promise.reject(deadlineExceeded(0));
    const stream = this.stream ?? this.open();
    this.lastId = this.lastId >= 0xffff_ffff ? 1 : this.lastId + 1;
    const id = this.lastId;
    return new Promise<ClientStreamResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.waiting.delete(id)) reject(deadlineExceeded(ms));
      }, ms);
      this.waiting.set(id, { resolve, reject, timer });
      try {
        stream.write({ id, ...message } as ClientExecuteStreamRequest);
      } catch (err) {
        // Written after the stream broke but before it said so: the break fails the call.
        this.broken(stream, err);
      }
    });
  }

  /** Cancels the stream: calls waiting on it fail with CANCELLED. */
  cancel(): void {
    this.stream?.cancel();
  }

  private open(): Stream {
    const client = this.client();
    const open = client.ExecuteStream as (metadata: grpc.Metadata, options: grpc.CallOptions) => Stream;
    const stream = open.call(client, new grpc.Metadata(), {});
    this.stream = stream;
    stream.on('data', (msg: ClientStreamResponse) => {
      const w = this.waiting.get(msg.id);
      if (!w) return; // its deadline passed
      this.waiting.delete(msg.id);
      clearTimeout(w.timer);
      if (msg.error) w.reject(msg.error);
      else w.resolve(msg);
    });
    stream.on('error', (err) => this.broken(stream, err));
    // The store ends a stream (OK) only with nothing of it running: whatever still waits was not run.
    stream.on('end', () => this.broken(stream, notRun('segment store ended the Execute stream (stopping); the request was not run')));
    return stream;
  }

  private broken(stream: Stream, err: unknown): void {
    if (this.stream !== stream) return;
    this.stream = undefined;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

/**
 * Two {@link StoreStream}s per segment store address: one for Execute calls, one for iterator pages,
 * so that a page of up to 2 MiB never queues in front of the small answers of updates and gets.
 */
export class ExecuteStreams {
  private readonly stores = new Map<string, { execute: StoreStream; iterate: StoreStream }>();

  constructor(private readonly connections: Connections) {}

  private streamsOf(address: string): { execute: StoreStream; iterate: StoreStream } {
    let s = this.stores.get(address);
    if (!s) {
      const client = () => this.connections.store(address);
      s = { execute: new StoreStream(client), iterate: new StoreStream(client) };
      this.stores.set(address, s);
    }
    return s;
  }

  /** Runs `request` on the store at `address`; rejects like a unary `Execute` would. */
  async execute(address: string, request: ClientExecuteRequest, deadline: number): Promise<ClientExecuteResponse> {
    const answer = await this.streamsOf(address).execute.send({ request }, deadline);
    return answer.response ?? { responses: [] };
  }

  /**
   * Reads one iterator page on the store at `address`: the undecoded `IterateResponse`. Rejects with
   * the page's error as a wire error, or like a unary call for a broken stream or passed deadline.
   */
  async iterate(address: string, request: IterateRequestInput, deadline: number): Promise<Buffer> {
    const answer = await this.streamsOf(address).iterate.send({ iterate: request }, deadline);
    return answer.iterate ?? Buffer.alloc(0);
  }

  /** Cancels every stream (calls waiting fail with CANCELLED). */
  close(): void {
    for (const s of this.stores.values()) {
      s.execute.cancel();
      s.iterate.cancel();
    }
    this.stores.clear();
  }
}
