/**
 * A check run before every call of a service, applied once to the server's handler map: the token
 * check (auth.ts) and a segment store's gate until the controller accepts it (segmentstore/server.ts).
 */
import type * as grpc from '@grpc/grpc-js';
import { bidiStreaming, isBidiStreaming, toServiceError } from './status';
import { KvtFault } from './fault';

/** Decides a call before its handler runs: undefined lets it proceed, a fault answers it. */
export type CallCheck = (method: string, metadata: grpc.Metadata) => KvtFault | undefined;

/** Told about each call a {@link CallCheck} refused. */
export type OnRefused = (method: string, fault: KvtFault, peer: string) => void;

/**
 * Wraps every handler of `handlers` (unary, or marked bidiStreaming) with `check`: a refused call fails
 * with the fault's gRPC status and `kvt-error-code` trailer (a stream when it opens: every message of a
 * stream let through runs), and its handler never runs.
 */
export function guardHandlers(handlers: grpc.UntypedServiceImplementation, check: CallCheck, onRefused?: OnRefused): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(handlers)) {
    if (isBidiStreaming(handler)) {
      const streamHandler = handler as grpc.handleBidiStreamingCall<unknown, unknown>;
      out[method] = bidiStreaming((call: grpc.ServerDuplexStream<unknown, unknown>) => {
        const fault = check(method, call.metadata);
        if (!fault) return streamHandler(call);
        onRefused?.(method, fault, call.getPeer());
        call.emit('error', toServiceError(fault));
      }) as grpc.UntypedHandleCall;
      continue;
    }
    const unaryHandler = handler as grpc.handleUnaryCall<unknown, unknown>;
    out[method] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const fault = check(method, call.metadata);
      if (!fault) return unaryHandler(call, callback);
      onRefused?.(method, fault, call.getPeer());
      callback(toServiceError(fault) as grpc.ServiceError);
    }) as grpc.UntypedHandleCall;
  }
  return out;
}
