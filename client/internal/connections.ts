/**
 * gRPC channels of a client: one per address (the controller and each segment store), shared by all
 * tables of a factory, closed together.
 */
import * as grpc from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';

/** A grpc-js client of one kvt service. */
export type ServiceClient = grpc.Client & Record<string, unknown>;

type Callback<Res> = (err: grpc.ServiceError | null, res?: Res) => void;
type UnaryMethod<Req, Res> = (req: Req, metadata: grpc.Metadata, options: grpc.CallOptions, cb: Callback<Res>) => grpc.ClientUnaryCall;

/**
 * Calls unary `method` of `client` with an absolute deadline (ms since epoch). Rejects with the raw
 * grpc-js status error; callers map it with `toKvtError`.
 */
export function callUnary<Req, Res>(client: ServiceClient, method: string, request: Req, deadline: number): Promise<Res> {
  const fn = client[method] as UnaryMethod<Req, Res>;
  return new Promise<Res>((resolve, reject) => {
    fn.call(client, request, new grpc.Metadata(), { deadline }, (err, res) => (err ? reject(err) : resolve(res as Res)));
  });
}

/** Lazily created channels, one per address. */
export class Connections {
  private readonly stores = new Map<string, ServiceClient>();
  private controllerClient: ServiceClient | undefined;

  constructor(private readonly controllerAddress: string) {}

  /** The controller client. */
  controller(): ServiceClient {
    this.controllerClient ??= new (kvtPackage().Controller)(this.controllerAddress, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as ServiceClient;
    return this.controllerClient;
  }

  /** The client of the segment store at `address`. */
  store(address: string): ServiceClient {
    let client = this.stores.get(address);
    if (!client) {
      client = new (kvtPackage().SegmentStore)(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as ServiceClient;
      this.stores.set(address, client);
    }
    return client;
  }

  /** Closes every channel; calls in flight fail with CANCELLED. */
  close(): void {
    this.controllerClient?.close();
    this.controllerClient = undefined;
    for (const client of this.stores.values()) client.close();
    this.stores.clear();
  }
}
