/**
 * gRPC channels of a client: one per address (the controller and each segment store), shared by all
 * tables of a factory, closed together.
 */
import * as grpc from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import { clientCredentials, ClientTlsOptions, withBearerToken } from './credentials';
import { InvalidArgumentError } from '../errors';
import { segmentStoreClientClass } from './wire-codec';

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

/** How a client's channels are secured: TLS and the bearer token sent on every call. */
export interface ConnectionSecurity {
  /** TLS towards the controller and every segment store; plaintext without. */
  tls?: ClientTlsOptions;
  /** Sent as `authorization: Bearer <token>`. */
  token?: string;
}

/** Lazily created channels, one per address. */
export class Connections {
  private readonly stores = new Map<string, ServiceClient>();
  private controllerClient: ServiceClient | undefined;
  private readonly credentials: grpc.ChannelCredentials;
  private readonly clientOptions: grpc.ClientOptions;

  /** @throws InvalidArgumentError for unusable TLS options or token (never echoing the token). */
  constructor(
    private readonly controllerAddress: string,
    security: ConnectionSecurity = {},
  ) {
    try {
      this.credentials = clientCredentials(security.tls);
      this.clientOptions = withBearerToken(GRPC_CHANNEL_OPTIONS, security.token);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  }

  /** The controller client. */
  controller(): ServiceClient {
    this.controllerClient ??= new (kvtPackage().Controller)(this.controllerAddress, this.credentials, this.clientOptions) as ServiceClient;
    return this.controllerClient;
  }

  /** The client of the segment store at `address`. */
  store(address: string): ServiceClient {
    let client = this.stores.get(address);
    if (!client) {
      client = new (segmentStoreClientClass())(address, this.credentials, this.clientOptions) as ServiceClient;
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
