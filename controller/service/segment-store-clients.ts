/**
 * The controller's gRPC clients of the segment stores, one per store address, each call with a
 * deadline. Only the segment-lifecycle RPCs are used here; data never passes through the controller.
 */
import * as grpc from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import { withBearerToken } from '../../proto/auth';
import type { CreateSegmentResponse, DeleteSegmentResponse } from '../../proto/messages';
import { fetchMetrics, MetricsResponse } from '../../server-kit/metrics/metrics-service';

type UnaryMethod = (request: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, res: unknown) => void) => void;

/** How the controller reaches the stores: channel credentials and the (admin) token to send. */
export interface StoreClientSecurity {
  /** @default plaintext */
  credentials?: grpc.ChannelCredentials;
  /** Sent as `authorization: Bearer <token>` on every call. */
  token?: string;
}

/** A pool of SegmentStore clients keyed by address. */
export class SegmentStoreClients {
  private readonly clients = new Map<string, grpc.Client>();
  private readonly credentials: grpc.ChannelCredentials;
  private readonly clientOptions: grpc.ClientOptions;

  constructor(
    private readonly callTimeoutMs: number,
    security: StoreClientSecurity = {},
  ) {
    this.credentials = security.credentials ?? grpc.credentials.createInsecure();
    this.clientOptions = withBearerToken(GRPC_CHANNEL_OPTIONS, security.token);
  }

  /** CreateSegment on the store at `address`; true when it was created now, false when it existed. */
  async createSegment(address: string, segmentId: string, table: string): Promise<boolean> {
    const res = (await this.call(address, 'CreateSegment', { segmentId, table })) as CreateSegmentResponse;
    return res.created;
  }

  /** DeleteSegment on the store at `address`; true when it existed. */
  async deleteSegment(address: string, segmentId: string): Promise<boolean> {
    const res = (await this.call(address, 'DeleteSegment', { segmentId })) as DeleteSegmentResponse;
    return res.deleted;
  }

  /** Some metrics of the store at `address` (`kvt.ops.v1.Metrics/Get`, for the status page), within `timeoutMs`. */
  metrics(address: string, names: string[], timeoutMs = this.callTimeoutMs): Promise<MetricsResponse> {
    return fetchMetrics(this.client(address), names, Date.now() + timeoutMs);
  }

  /** Closes every client. */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  private client(address: string): grpc.Client {
    let client = this.clients.get(address);
    if (!client) {
      const Ctor = kvtPackage().SegmentStore;
      client = new Ctor(address, this.credentials, this.clientOptions);
      this.clients.set(address, client);
    }
    return client;
  }

  private call(address: string, method: string, request: unknown): Promise<unknown> {
    const client = this.client(address) as unknown as Record<string, UnaryMethod>;
    const deadline = Date.now() + this.callTimeoutMs;
    return new Promise((resolve, reject) => {
      client[method].call(client, request, new grpc.Metadata(), { deadline }, (err, res) => (err ? reject(err) : resolve(res)));
    });
  }
}
