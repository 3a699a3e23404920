/**
 * The standard gRPC health service (`grpc.health.v1.Health`, from `grpc-health-check`) on every server
 * process, and its client. A process reports SERVING only once it can do its work (the controller once
 * its metadata is open and it listens; a segment store once the controller accepted its registration,
 * or at once when standalone) and NOT_SERVING from the moment it starts stopping, or after a
 * fail-stop, so that a load balancer or an orchestrator's probe stops sending it work before it goes.
 * The overall status (service name "") and the kvt service's own name always agree.
 *
 * The service needs no token: a probe must work without credentials, and it tells nothing but these
 * statuses (as etcd's `/health` does). `Watch` streams are ended when the process stops, so an open
 * watch never holds the gRPC server's graceful shutdown.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { HealthImplementation, protoPath, ServingStatus } from 'grpc-health-check';

/** What a health check answers: the server's statuses, and SERVICE_UNKNOWN (Watch only). */
export type HealthStatus = ServingStatus | 'SERVICE_UNKNOWN';

type WatchCall = grpc.ServerWritableStream<unknown, { status: HealthStatus }>;

/** The health service of one process, reporting `serviceName` (e.g. `kvt.v1.Controller`) and "" together. */
export class ProcessHealth {
  private readonly implementation: HealthImplementation;
  private readonly watches = new Set<WatchCall>();
  private current: ServingStatus = 'NOT_SERVING';

  constructor(readonly serviceName: string) {
    this.implementation = new HealthImplementation({ '': 'NOT_SERVING', [serviceName]: 'NOT_SERVING' });
  }

  /** The status reported now. */
  get status(): ServingStatus {
    return this.current;
  }

  /** Adds the health service to `server` (before it is bound). */
  addTo(server: grpc.Server): void {
    const watches = this.watches;
    // The library's handlers, with each Watch call remembered until it ends, so that close() can end it.
    const recording = {
      addService(service: grpc.ServiceDefinition, handlers: grpc.UntypedServiceImplementation): void {
        const watch = handlers.watch as grpc.handleServerStreamingCall<unknown, { status: HealthStatus }>;
        const tracked = (call: WatchCall) => {
          watches.add(call);
          const forget = () => watches.delete(call);
          call.on('cancelled', forget);
          call.on('finish', forget);
          watch(call);
        };
        server.addService(service, { ...handlers, watch: tracked as grpc.UntypedHandleCall });
      },
    };
    this.implementation.addToServer(recording as unknown as grpc.Server);
  }

  /** Reports SERVING (the process can do its work). */
  serving(): void {
    this.set('SERVING');
  }

  /** Reports NOT_SERVING (stopping, failed, or not yet ready). */
  notServing(): void {
    this.set('NOT_SERVING');
  }

  /** Reports NOT_SERVING and ends every open Watch stream (the process is going away). */
  close(): void {
    this.notServing();
    for (const call of this.watches) call.end();
    this.watches.clear();
  }

  private set(status: ServingStatus): void {
    if (this.current === status) return;
    this.current = status;
    this.implementation.setStatus('', status);
    this.implementation.setStatus(this.serviceName, status);
  }
}

/** Options of {@link checkHealth}. */
export interface HealthClientOptions {
  /** The service to ask about; "" is the process as a whole. @default '' */
  service?: string;
  /** @default plaintext */
  credentials?: grpc.ChannelCredentials;
  /** Deadline of the call. @default 5000 */
  timeoutMs?: number;
}

type HealthClient = grpc.Client & {
  Check(req: { service: string }, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: { status: HealthStatus }) => void): void;
  Watch(req: { service: string }, options?: grpc.CallOptions): grpc.ClientReadableStream<{ status: HealthStatus }>;
};

let healthClientConstructor: grpc.ServiceClientConstructor | undefined;

/** A client of `grpc.health.v1.Health` at `address` (the caller closes it). */
export function healthClient(address: string, credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure()): HealthClient {
  if (!healthClientConstructor) {
    const definition = protoLoader.loadSync(protoPath, { keepCase: true, enums: String, defaults: true });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as { grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } } };
    healthClientConstructor = pkg.grpc.health.v1.Health;
  }
  return new healthClientConstructor(address, credentials) as unknown as HealthClient;
}

/**
 * Asks the process at `address` for its status (`Check`).
 * @throws the gRPC error when the call fails (unreachable: UNAVAILABLE; unknown service: NOT_FOUND)
 */
export async function checkHealth(address: string, options: HealthClientOptions = {}): Promise<HealthStatus> {
  const client = healthClient(address, options.credentials);
  try {
    const deadline = Date.now() + (options.timeoutMs ?? 5000);
    return await new Promise<HealthStatus>((resolve, reject) => {
      client.Check({ service: options.service ?? '' }, { deadline }, (err, res) => (err ? reject(err) : resolve(res.status)));
    });
  } finally {
    client.close();
  }
}
