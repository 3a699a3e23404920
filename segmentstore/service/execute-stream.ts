/**
 * The server side of `ExecuteStream`: Execute (and Iterate) calls carried as messages of long-lived
 * streams, each answered under the id it came with. A message runs exactly like the unary call (same
 * functions, same group commit); only the transport differs, which is the point: in the
 * benchmark's profiles a unary call cost the client ~250 µs and the store ~130 µs of CPU on this
 * machine before any work was done (an HTTP/2 stream, headers, trailers, a deadline), a message on a
 * stream about 45 µs and 30 µs.
 *
 * Rules:
 * - at most {@link MAX_STREAM_IN_FLIGHT} messages of one stream run at once, each counted until
 *   HTTP/2 has taken its answer (grpc-js calls back once the frames are sent, within the client's flow
 *   control window), not merely until the answer is queued: past that the stream stops reading (HTTP/2
 *   flow control then holds the client back). So a client that sends but does not read its answers
 *   makes the store run and hold at most that many, not one per message it sent;
 * - likewise the stream stops reading once the messages it runs take {@link MAX_STREAM_REQUEST_BYTES}
 *   (their size on the wire), so a client cannot make it hold 64 maximum-size requests;
 * - and once its answers take {@link MAX_STREAM_ANSWER_BYTES}: those not yet taken by HTTP/2 count
 *   with their size, a running Iterate with the most its page may take, and the Gets of running
 *   messages draw on what is left as they read, so a client that does not read cannot make the store
 *   hold 64 Get answers of 32 MiB either: once nothing is left a Get answer takes only its first entry
 *   (the client asks again for the rest, as after any answer cut short by its byte cap);
 * - it reads again below half of every bound, and reads at most one message ahead meanwhile;
 * - every message also counts against the store-wide {@link InFlightBudget} until HTTP/2 took its
 *   answer (or its stream breaks), and from when it is encoded its answer too: one that would pass
 *   it is answered OVERLOADED under its id without running;
 * - a message whose request (or iterate) does not decode, inside a message that does, is answered
 *   under its id with INVALID_ARGUMENT; a message that does not decode at all (its id cannot be
 *   trusted) ends the stream with INVALID_ARGUMENT, once the messages before it are answered, and
 *   nothing after it is run;
 * - on {@link ExecuteStreams.close} (the store is stopping) messages in flight are answered, later
 *   ones are refused with UNAVAILABLE without running, and every stream is ended with OK once idle,
 *   so the gRPC server can shut down without waiting out its grace period;
 * - a client that half-closes gets its answers, then the end of the stream.
 */
import type * as grpc from '@grpc/grpc-js';
import { ErrorCodes } from '../../proto/error-codes';
import { MAX_ITERATOR_PAGE_BYTES, MAX_ITERATOR_PAGE_ITEMS, MAX_MESSAGE_BYTES } from '../../proto/limits';
import type { ExecuteRequest, IterateRequest, IterateResponse } from '../../proto/messages';
import { bidiStreaming, MalformedRequest, toServiceError, wireErrorOf } from '../../server-kit/status';
import { invalidArgument, KvtFault } from '../../server-kit/fault';
import { BytePool, getAnswerCaps, PageCaps } from '../storage/read/page-caps';
import { InFlightBudget } from './in-flight-budget';
import { encodeExecuteStreamResponse, MalformedStreamMessage, StreamResponseMessage, WireExecuteResponse } from './wire-codec';

/** Messages of one stream that may run at once. */
export const MAX_STREAM_IN_FLIGHT = 64;
/**
 * Bytes of the messages of one stream that may run at once: the largest message, so a request of
 * any size the store accepts still runs, alone if it must (a stream holds at most this plus the one
 * message that passed it).
 */
export const MAX_STREAM_REQUEST_BYTES = MAX_MESSAGE_BYTES;
/** Bytes of the answers of one stream that may be held at once (see the rules above). */
export const MAX_STREAM_ANSWER_BYTES = MAX_MESSAGE_BYTES;
/**
 * What a running Iterate holds of {@link MAX_STREAM_ANSWER_BYTES} until its page is encoded: the page
 * cap, and the wire bytes of the most items a page holds beside their keys and values.
 */
export const ITERATE_ANSWER_RESERVE = MAX_ITERATOR_PAGE_BYTES + MAX_ITERATOR_PAGE_ITEMS * 32;
/**
 * Messages grpc-js reads ahead of a paused stream: the high-water mark of the stream's Readable, 16 by
 * default, which would read 16 more messages (of up to 64 MiB) past either bound.
 */
const READ_AHEAD_MESSAGES = 1;

/** A message whose request or iterate decoded (it may still have neither). */
type DecodedMessage = { id: number; request: ExecuteRequest | null; iterate: IterateRequest | null; bytes: number };
type StreamMessage = DecodedMessage | MalformedStreamMessage | MalformedRequest;
type StreamCall = grpc.ServerDuplexStream<StreamMessage, StreamResponseMessage | Buffer>;

interface OpenStream {
  readonly call: StreamCall;
  inFlight: number;
  /** Wire bytes of the messages in flight: what they hold of the store-wide budget too (given back as each is answered, or all when the stream breaks). */
  bytes: number;
  /** Wire bytes of the answers written and not yet taken by HTTP/2, which the store-wide budget holds as well. */
  charged: number;
  /** Answers held: see {@link MAX_STREAM_ANSWER_BYTES}. */
  readonly answers: BytePool;
  paused: boolean;
  /** Set by a message that does not decode: the stream ends with it once nothing is in flight. */
  failure: KvtFault | undefined;
  /** The client half-closed. */
  clientDone: boolean;
  /** Ended (by us) or broken (cancelled by the client, transport error): nothing more is written. */
  finished: boolean;
}

/** Every open `ExecuteStream` of one store, and the handler that opens them. */
export class ExecuteStreams {
  private readonly open = new Set<OpenStream>();
  private closing = false;
  private idle: (() => void) | undefined;
  private closed: Promise<void> | undefined;

  /**
   * @param run runs one Execute (never rejects for a domain error: those go into its sub-responses);
   *   its Gets share `budget`, which draws on the stream's answer bytes
   * @param iterate reads one iterator page (rejects with its fault, sent as the message's error)
   * @param onInternal told about unexpected failures
   * @param inFlight the store-wide bound on requests held, shared with the unary calls
   */
  constructor(
    private readonly run: (request: ExecuteRequest, budget: PageCaps) => Promise<WireExecuteResponse>,
    private readonly iterate: (request: IterateRequest) => Promise<IterateResponse | Buffer>,
    private readonly onInternal: (err: unknown) => void,
    private readonly inFlight = new InFlightBudget(Infinity),
  ) {}

  /** The grpc-js handler of `ExecuteStream`. */
  readonly handler = bidiStreaming((call: StreamCall): void => {
    const s: OpenStream = {
      call,
      inFlight: 0,
      bytes: 0,
      charged: 0,
      answers: new BytePool(MAX_STREAM_ANSWER_BYTES),
      paused: false,
      failure: undefined,
      clientDone: false,
      finished: false,
    };
    if (this.closing) {
      s.finished = true;
      call.end();
      return;
    }
    limitReadAhead(call);
    this.open.add(s);
    call.on('data', (msg: StreamMessage) => this.onMessage(s, msg));
    call.on('end', () => {
      s.clientDone = true;
      this.maybeEnd(s);
    });
    call.on('cancelled', () => this.forget(s));
    call.on('error', () => this.forget(s));
  });

  /**
   * Refuses further messages and ends every stream once its messages in flight are answered;
   * resolves when all have ended (the caller bounds the wait).
   */
  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => {
      this.idle = resolve;
      this.closing = true;
      for (const s of [...this.open]) this.maybeEnd(s);
      if (this.open.size === 0) resolve();
    });
    return this.closed;
  }

  /**
   * Takes one message of `s`: ends the stream after one that does not decode, refuses one that may not
   * run (stopping, malformed, empty, past the store-wide budget) under its id, else starts it.
   */
  private onMessage(s: OpenStream, msg: StreamMessage): void {
    if (s.finished || s.failure) return;
    if (msg instanceof MalformedRequest) {
      s.failure = invalidArgument(`message is not a valid kvt.v1.ExecuteStreamRequest: ${msg.reason}`);
      this.pause(s);
      this.maybeEnd(s);
      return;
    }
    const id = msg.id;
    if (this.closing) {
      this.refuse(s, id, new KvtFault(ErrorCodes.UNAVAILABLE, 'segment store is stopping; the request was not run'));
      return;
    }
    if (msg instanceof MalformedStreamMessage) {
      this.refuse(s, id, invalidArgument(`message ${id}: ${msg.reason}`));
      return;
    }
    if (!msg.request && !msg.iterate) {
      this.refuse(s, id, invalidArgument(`message ${id} has no request`));
      return;
    }
    const refusal = this.inFlight.acquire(msg.bytes, msg.request ? 'Execute message' : 'Iterate message');
    if (refusal) {
      this.refuse(s, id, refusal);
      return;
    }
    this.start(s, msg);
  }

  /**
   * Runs message `msg` of `s`, whose bytes the store-wide budget already holds: counts it against the
   * stream's bounds (pausing it at one) and answers it when it settles.
   */
  private start(s: OpenStream, msg: DecodedMessage): void {
    const id = msg.id;
    const bytes = msg.bytes;
    const reserved = msg.request ? 0 : ITERATE_ANSWER_RESERVE;
    s.inFlight++;
    s.bytes += bytes;
    s.answers.used += reserved;
    if (overBound(s)) this.pause(s);
    const caps = msg.request ? getAnswerCaps(s.answers) : undefined;
    let running: Promise<StreamResponseMessage>;
    try {
      running = msg.request
        ? this.run(msg.request, caps!).then((response) => ({ id, response, iterate: null, error: null }))
        : this.iterate(msg.iterate!).then((iterate) => ({ id, response: null, iterate, error: null }));
    } catch (err) {
      running = Promise.reject(err);
    }
    running
      .then(
        (answer) => answer,
        (err: unknown): StreamResponseMessage => {
          const error = wireErrorOf(err);
          if (error.code === ErrorCodes.INTERNAL) this.onInternal(err);
          return { id, response: null, iterate: null, error };
        },
      )
      .then((answer) => this.answer(s, answer, bytes, reserved + (caps ? caps.drawn : 0)));
  }

  /**
   * Writes the answer of a message (`bytes` on the wire) that held `held` of the stream's answer bytes
   * (an Iterate's reserve, or what its Gets drew as they read): from now on the answer holds its own
   * size instead, until HTTP/2 takes it.
   */
  private answer(s: OpenStream, answer: StreamResponseMessage, bytes: number, held: number): void {
    let encoded: Buffer;
    try {
      encoded = encodeExecuteStreamResponse(answer);
    } catch (err) {
      this.onInternal(err);
      encoded = encodeExecuteStreamResponse({ id: answer.id, response: null, iterate: null, error: wireErrorOf(err) });
    }
    s.answers.used += encoded.length - held;
    if (!s.finished) {
      this.inFlight.charge(encoded.length);
      s.charged += encoded.length;
    }
    if (overBound(s)) this.pause(s);
    this.write(s, encoded, () => this.answered(s, bytes, encoded.length));
  }

  /** Answers message `id` with `fault` without running it. */
  private refuse(s: OpenStream, id: number, fault: KvtFault): void {
    this.write(s, { id, response: null, iterate: null, error: wireErrorOf(fault) });
  }

  private pause(s: OpenStream): void {
    if (s.paused) return;
    s.paused = true;
    s.call.pause();
  }

  /**
   * A message of `s` (`bytes` on the wire) is answered and HTTP/2 took the answer: read again if
   * paused and below half of every bound, end if done.
   */
  private answered(s: OpenStream, bytes: number, answerBytes: number): void {
    if (!s.finished) {
      this.inFlight.release(bytes + answerBytes);
      s.charged -= answerBytes;
    }
    s.inFlight--;
    s.bytes -= bytes;
    s.answers.used -= answerBytes;
    if (s.paused && !s.failure && belowHalf(s)) {
      s.paused = false;
      s.call.resume();
    }
    this.maybeEnd(s);
  }

  /**
   * Writes `msg` unless the stream is finished; `done` runs once HTTP/2 took it, or at once when it
   * is dropped. (A stream that breaks meanwhile is forgotten: its count no longer matters.)
   */
  private write(s: OpenStream, msg: StreamResponseMessage | Buffer, done?: () => void): void {
    if (s.finished) {
      done?.();
      return;
    }
    s.call.write(msg, done);
  }

  /**
   * Ends the stream when nothing runs: with its failure (INVALID_ARGUMENT) after a message that did
   * not decode, else (OK) when either side is done with it.
   */
  private maybeEnd(s: OpenStream): void {
    if (s.finished || s.inFlight > 0) return;
    if (s.failure) {
      this.forget(s);
      s.call.emit('error', toServiceError(s.failure));
      return;
    }
    if (!(s.clientDone || this.closing)) return;
    this.forget(s);
    s.call.end();
  }

  private forget(s: OpenStream): void {
    // Its messages still running and its answers not taken (a broken stream) stop counting now: their
    // answers have nowhere to go.
    if (!s.finished) this.inFlight.release(s.bytes + s.charged);
    s.finished = true;
    this.open.delete(s);
    if (this.open.size === 0 && this.idle) {
      const idle = this.idle;
      this.idle = undefined;
      idle();
    }
  }
}

/** Whether `s` runs or holds as much as one of its bounds allows (it stops reading). */
function overBound(s: OpenStream): boolean {
  return s.inFlight >= MAX_STREAM_IN_FLIGHT || s.bytes >= MAX_STREAM_REQUEST_BYTES || s.answers.used >= MAX_STREAM_ANSWER_BYTES;
}

/** Whether `s` is below half of every bound (a paused stream reads again). */
function belowHalf(s: OpenStream): boolean {
  return s.inFlight < MAX_STREAM_IN_FLIGHT / 2 && s.bytes < MAX_STREAM_REQUEST_BYTES / 2 && s.answers.used < MAX_STREAM_ANSWER_BYTES / 2;
}

/**
 * Lowers how far grpc-js reads ahead of a paused stream to {@link READ_AHEAD_MESSAGES}. grpc-js makes
 * the stream (a Readable in object mode) with no way to set its high-water mark, so its state is set
 * here; execute-stream.test.ts checks the bound still holds.
 */
function limitReadAhead(call: StreamCall): void {
  const state = (call as unknown as { _readableState?: { highWaterMark?: unknown } })._readableState;
  if (state && typeof state.highWaterMark === 'number') state.highWaterMark = READ_AHEAD_MESSAGES;
}
