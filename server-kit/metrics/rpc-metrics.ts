/**
 * Per-RPC metrics of a gRPC server, named as go-grpc-prometheus names them so that the usual dashboards
 * and alerts fit: calls started, calls handled by status code, handling time by method and code, and
 * the messages received and sent (on a stream, each message is one operation: a coalesced Execute or an
 * iterator page). Recorded by a server interceptor, so that every call counts, refused ones included
 * (a missing token, a store not yet registered, an overloaded store), whatever its handler.
 */
import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { CounterCell, FastCounter, FastHistogram, HistogramCell } from './fast-metrics';
import { LATENCY_BUCKETS_SECONDS, secondsSince } from './metrics-registry';

/** The name of each gRPC status code (`OK`, `NOT_FOUND`, …). */
const CODE_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(grpc.status)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [v as number, k]),
);

/** `OK`, `UNAVAILABLE`, …; the number for a code grpc-js does not name. */
export function statusName(code: number | undefined): string {
  return CODE_NAMES.get(code ?? grpc.status.UNKNOWN) ?? String(code);
}

/** The series of one method, made once per method; those by code once per code. */
interface MethodSeries {
  labels: [type: string, service: string, method: string];
  started: CounterCell;
  received: CounterCell;
  sent: CounterCell;
  byCode: Map<number | undefined, { handled: CounterCell; seconds: HistogramCell }>;
}

/** The RPC metrics of one server (on the path of every call and stream message: fast-metrics.ts). */
export class RpcMetrics {
  private readonly started: FastCounter;
  private readonly handled: FastCounter;
  private readonly seconds: FastHistogram;
  private readonly received: FastCounter;
  private readonly sent: FastCounter;
  private readonly methods = new Map<string, MethodSeries>();

  constructor(registry: Registry) {
    const rpc = ['grpc_type', 'grpc_service', 'grpc_method'];
    this.started = new FastCounter(registry, 'grpc_server_started_total', 'RPCs started on the server.', rpc);
    this.handled = new FastCounter(registry, 'grpc_server_handled_total', 'RPCs completed on the server, by status code.', [...rpc, 'grpc_code']);
    this.seconds = new FastHistogram(
      registry,
      'grpc_server_handling_seconds',
      'Time from the start of an RPC to its status, by method and status code.',
      [...rpc, 'grpc_code'],
      LATENCY_BUCKETS_SECONDS,
    );
    this.received = new FastCounter(registry, 'grpc_server_msg_received_total', 'Messages received on RPCs (each message of a stream).', rpc);
    this.sent = new FastCounter(registry, 'grpc_server_msg_sent_total', 'Messages sent on RPCs (each message of a stream).', rpc);
  }

  /** The server interceptor that records every call (pass it in the server's `interceptors`). */
  readonly interceptor: grpc.ServerInterceptor = (method, call) => {
    const series = this.series(method);
    series.started.inc();
    const start = performance.now();
    let done = false;
    const finish = (code: number | undefined) => {
      if (done) return;
      done = true;
      let byCode = series.byCode.get(code);
      if (!byCode) {
        byCode = { handled: this.handled.series(...series.labels, statusName(code)), seconds: this.seconds.series(...series.labels, statusName(code)) };
        series.byCode.set(code, byCode);
      }
      byCode.handled.inc();
      byCode.seconds.observe(secondsSince(start));
    };
    return new grpc.ServerInterceptingCall(call, {
      // grpc-js tells onCancel when a call ends, answered or not: only a call ended without a status (the client went away) counts as CANCELLED.
      start: (next) =>
        next({
          onReceiveMessage: (message, nextMessage) => {
            series.received.inc();
            nextMessage(message);
          },
          onCancel: () => finish(grpc.status.CANCELLED),
        }),
      sendMessage: (message, next) => {
        series.sent.inc();
        next(message);
      },
      sendStatus: (status, next) => {
        finish(status.code);
        next(status);
      },
    });
  };

  private series(method: grpc.ServerMethodDefinition<unknown, unknown>): MethodSeries {
    let series = this.methods.get(method.path);
    if (!series) {
      const [, service = '', name = ''] = /^\/([^/]*)\/(.*)$/.exec(method.path) ?? [];
      const type = method.requestStream ? (method.responseStream ? 'bidi_stream' : 'client_stream') : method.responseStream ? 'server_stream' : 'unary';
      const labels: MethodSeries['labels'] = [type, service, name];
      series = { labels, started: this.started.series(...labels), received: this.received.series(...labels), sent: this.sent.series(...labels), byCode: new Map() };
      this.methods.set(method.path, series);
    }
    return series;
  }
}
