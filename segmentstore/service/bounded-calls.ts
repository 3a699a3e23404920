/**
 * The unary data calls' share of the store-wide {@link InFlightBudget}. A call counts with its
 * request's size on the wire from arrival until its answer is ready, and then with its answer's size
 * until grpc-js has written the answer out (HTTP/2 flow control lets it go only as fast as the client
 * reads) or the call ends. Without the second part a client that sends Gets and does not read their
 * answers would make the store hold every answer, up to 32 MiB each, outside the bound.
 *
 * Sizes come from the codecs: the request decoder and the answer encoder of each bounded method note
 * the size of what they decode or encode, keyed by the message object.
 */
import * as grpc from '@grpc/grpc-js';
import type { InFlightBudget } from './in-flight-budget';

/** The unary data calls, which count against the store's budget with their size on the wire. */
export const BOUNDED_METHODS = ['Update', 'Get', 'Iterate', 'Scan', 'Execute'] as const;

/** The wire size of each decoded request of a bounded call. */
const requestBytes = new WeakMap<object, number>();
/** The wire size of each encoded answer of a bounded call. */
const answerBytes = new WeakMap<object, number>();

/** `method` with codecs that also note each request's and each answer's size on the wire. */
export function notingSizes(method: grpc.MethodDefinition<unknown, unknown>): grpc.MethodDefinition<unknown, unknown> {
  const decode = method.requestDeserialize;
  const encode = method.responseSerialize;
  return {
    ...method,
    requestDeserialize: (bytes: Buffer) => {
      const req = decode(bytes);
      if (req !== null && typeof req === 'object') requestBytes.set(req, bytes.length);
      return req;
    },
    responseSerialize: (res: unknown) => {
      const bytes = encode(res);
      if (res !== null && typeof res === 'object') answerBytes.set(res, bytes.length);
      return bytes;
    },
  };
}

/** The size noted for `answer` by its encoder (0 if none), forgotten once read: an object sent again is counted again only when encoded again. */
function takeAnswerBytes(answer: object): number {
  const bytes = answerBytes.get(answer) ?? 0;
  answerBytes.delete(answer);
  return bytes;
}

/** `handle` run only when the store's budget takes the request (else it is refused, OVERLOADED), which it holds until answered. */
export function bounded<Req extends object, Res>(budget: InFlightBudget, what: string, handle: (req: Req) => Promise<Res>): (req: Req) => Promise<Res> {
  return (req) => {
    const bytes = requestBytes.get(req) ?? 0;
    const refusal = budget.acquire(bytes, `${what} call`);
    if (refusal) return Promise.reject(refusal);
    let answer: Promise<Res>;
    try {
      answer = handle(req);
    } catch (err) {
      answer = Promise.reject(err);
    }
    return answer.finally(() => budget.release(bytes));
  };
}

/**
 * The server interceptor that holds each answer of the bounded calls among `paths` (gRPC method
 * paths) in `budget` from its encoding until it has been written out, or the call has ended.
 */
export function holdingAnswers(budget: InFlightBudget, paths: readonly string[]): grpc.ServerInterceptor {
  const boundedPaths = new Set(paths);
  // Other calls (ExecuteStream above all) pass unwrapped: grpc-js chains interceptors by the interface,
  // though its type asks for the class.
  return (method, call) => (boundedPaths.has(method.path) ? new AnswerHoldingCall(call, new AnswerHold(budget)) : (call as grpc.ServerInterceptingCall));
}

/** The bytes of a call's answer held in `budget` while it waits to be written. */
class AnswerHold {
  private held = 0;
  constructor(private readonly budget: InFlightBudget) {}

  /** Holds `bytes` more (they cannot be refused: the answer is ready). */
  add(bytes: number): void {
    this.budget.charge(bytes);
    this.held += bytes;
  }

  /** Gives back all that is held (the answer was sent, or the call ended). */
  readonly giveBack = (): void => {
    this.budget.release(this.held);
    this.held = 0;
  };
}

/** A bounded call whose answer is held in the budget from its encoding until written out, or the call ends. */
class AnswerHoldingCall extends grpc.ServerInterceptingCall {
  constructor(
    next: grpc.ServerInterceptingCallInterface,
    private readonly hold: AnswerHold,
  ) {
    // grpc-js tells the listener's onCancel when the call ends, answered or not.
    super(next, { start: (start) => start({ onCancel: hold.giveBack }) });
  }

  override sendMessage(message: unknown, callback: () => void): void {
    super.sendMessage(message, () => {
      this.hold.giveBack();
      callback();
    });
    // The answer was encoded (and its write begun) within the call above; its callback comes later.
    const bytes = typeof message === 'object' && message !== null ? takeAnswerBytes(message) : 0;
    if (bytes > 0) this.hold.add(bytes);
  }
}
