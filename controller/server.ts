/**
 * The controller as an object: metadata store, store registry, table operations, resumer and the gRPC
 * server, started in that order and stopped in reverse. Usable in-process (tests, embedding) as well as
 * by `kvt controller`.
 */
import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { controllerService } from '../proto/load';
import { withAuth } from '../server-kit/auth';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../server-kit/grpc-server';
import { ProcessHealth } from '../server-kit/health';
import type { HttpEndpoint } from '../server-kit/http-server';
import { newMetricsRegistry } from '../server-kit/metrics/metrics-registry';
import { startMetricsServer } from '../server-kit/metrics/metrics-server';
import { RpcMetrics } from '../server-kit/metrics/rpc-metrics';
import { Logger, rateLimitedWarning, RateLimitedWarning, silentLogger } from '../server-kit/log';
import { FatalSignal } from '../server-kit/main';
import { outgoingCredentials, readTlsFiles, serverCredentials } from '../server-kit/tls';
import type { ControllerConfig } from './config';
import { MetadataStore } from './metadata/metadata-store';
import { clusterStatus } from './ops/cluster-status';
import { registerControllerMetrics } from './ops/controller-metrics';
import { StoreRates } from './ops/store-rates';
import { startStatusServer, STATUS_REFRESH_MS } from './ops/status-server';
import { CONTROLLER_ADMIN_METHODS, controllerHandlers } from './service/controller-service';
import { Resumer } from './service/resumer';
import { SegmentStoreClients } from './service/segment-store-clients';
import { SegmentWork } from './service/segment-work';
import { StoreRegistry } from './service/store-registry';
import { StoreRemoval } from './service/store-removal';
import { TableOperations } from './service/table-operations';

/** Lifecycle of a {@link ControllerServer}. */
export type ControllerServerState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

interface Parts {
  meta: MetadataStore;
  registry: StoreRegistry;
  clients: SegmentStoreClients;
  ops: TableOperations;
  resumer: Resumer;
  grpcServer: grpc.Server;
  metricsEndpoint: HttpEndpoint;
  statusEndpoint: HttpEndpoint;
}

/** A controller process's server: `created → starting → running → stopping → stopped | failed`. */
export class ControllerServer {
  private stateValue: ControllerServerState = 'created';
  private parts: Partial<Parts> = {};
  private boundPort = 0;
  private stopPromise: Promise<void> | undefined;
  private readonly fatalSignal = new FatalSignal();
  /** The `call rejected` warning of the token check (flushed as the controller stops). */
  private readonly rejectedCalls: RateLimitedWarning;
  /** `grpc.health.v1`: SERVING once the metadata is open and the controller listens; NOT_SERVING from the start of a stop or a fail-stop. */
  readonly health = new ProcessHealth('kvt.v1.Controller');
  /** The controller's metrics, served at `/metrics` with `metricsPort`. */
  readonly metrics: Registry;

  constructor(
    readonly config: ControllerConfig,
    private readonly logger: Logger = silentLogger,
  ) {
    this.rejectedCalls = rateLimitedWarning(logger, 'call rejected', 'code');
    this.metrics = newMetricsRegistry(config.metricsPort !== undefined);
    void this.fatalSignal.promise.then(() => this.health.notServing());
  }

  /**
   * Resolves with the error when a metadata write fails (the metadata store is fail-stop); never
   * resolves otherwise. `kvt controller` then stops and exits 1, to be restarted.
   */
  get fatal(): Promise<Error> {
    return this.fatalSignal.promise;
  }

  /** Creates and starts a server. @throws as {@link ControllerServer.start} */
  static async start(config: ControllerConfig, logger: Logger = silentLogger): Promise<ControllerServer> {
    const server = new ControllerServer(config, logger);
    await server.start();
    return server;
  }

  get state(): ControllerServerState {
    return this.stateValue;
  }

  /** The bound port (the real one when the config said 0); 0 before running. */
  get port(): number {
    return this.boundPort;
  }

  /** The port of `/metrics` (the real one when the config said 0); undefined without `metricsPort`. */
  get metricsPort(): number | undefined {
    return this.parts.metricsEndpoint?.port;
  }

  /** The port of the status page (the real one when the config said 0); undefined without `httpPort`. */
  get httpPort(): number | undefined {
    return this.parts.statusEndpoint?.port;
  }

  /**
   * Opens the metadata, starts the registry and the resumer, and listens.
   * @throws DataDirInUseError when another controller holds the data directory
   * @throws Error "port HOST:PORT is already in use" when the port is taken
   */
  async start(): Promise<void> {
    if (this.stateValue !== 'created') throw new Error(`cannot start a controller that is ${this.stateValue}`);
    this.stateValue = 'starting';
    try {
      await this.startParts();
      this.stateValue = 'running';
    } catch (err) {
      await this.release();
      this.stateValue = 'failed';
      throw err;
    }
  }

  private async startParts(): Promise<void> {
    const c = this.config;
    // TLS files are read first: a bad one fails the start before anything is opened.
    const tls = readTlsFiles({ certFile: c.tlsCert, keyFile: c.tlsKey, caFile: c.tlsCa });
    const meta = (this.parts.meta = await MetadataStore.open(c.dataDir));
    meta.onFailure = (err) => {
      this.logger.error('metadata write failed: refusing every change; restart the controller to recover', { err });
      this.fatalSignal.raise(err);
    };
    // A restart is a change of routing as far as liveness goes: every store starts in its grace period.
    await meta.bumpGeneration();
    const registry = (this.parts.registry = new StoreRegistry(meta, c, this.logger));
    registry.start();
    const clients = (this.parts.clients = new SegmentStoreClients(c.storeCallTimeoutMs, { credentials: outgoingCredentials(tls), token: c.adminToken }));
    const work = new SegmentWork(meta, registry, clients, this.logger, c.testPauseAfterSegmentMs);
    const ops = (this.parts.ops = new TableOperations(meta, registry, work, c, this.logger));
    const grpcServer = (this.parts.grpcServer = newGrpcServer({ interceptors: [new RpcMetrics(this.metrics).interceptor] }));
    const removal = new StoreRemoval(meta, registry, ops, c, this.logger);
    const handlers = controllerHandlers({ meta, registry, ops, removal, heartbeatIntervalMs: c.heartbeatIntervalMs, logger: this.logger });
    grpcServer.addService(controllerService(), withAuth(handlers, c, CONTROLLER_ADMIN_METHODS, this.rejectedCalls));
    this.health.addTo(grpcServer);
    registerControllerMetrics(this.metrics, meta, registry);
    this.boundPort = await bindGrpcServer(grpcServer, c.host, c.port, serverCredentials(tls));
    if (c.metricsPort !== undefined) this.parts.metricsEndpoint = await startMetricsServer(this.metrics, c.host, c.metricsPort);
    if (c.httpPort !== undefined) {
      const rates = new StoreRates((address, names, timeoutMs) => clients.metrics(address, names, timeoutMs));
      const status = () => clusterStatus({ meta, registry, rates, storeTimeoutMs: c.storeTimeoutMs, refreshMs: STATUS_REFRESH_MS });
      this.parts.statusEndpoint = await startStatusServer(c.host, c.httpPort, status);
    }
    const resumer = (this.parts.resumer = new Resumer(meta, ops, c.resumeIntervalMs, this.logger));
    registry.onStoreLive(() => resumer.kick());
    resumer.start();
    this.health.serving();
  }

  /** Stops listening, lets running requests end, stops the resumer and closes the metadata. Idempotent. */
  stop(): Promise<void> {
    if (!this.stopPromise) {
      this.stopPromise = (async () => {
        if (this.stateValue === 'created') {
          this.stateValue = 'stopped';
          return;
        }
        const failed = this.stateValue === 'failed';
        this.stateValue = 'stopping';
        await this.release();
        this.stateValue = failed ? 'failed' : 'stopped';
        this.rejectedCalls.flush();
        this.logger.info('controller stopped', { port: this.boundPort });
      })();
    }
    return this.stopPromise;
  }

  /** Releases whatever was started, in reverse order. */
  private async release(): Promise<void> {
    const p = this.parts;
    // NOT_SERVING first, so that probes and balancers turn away while the rest winds down.
    this.health.close();
    await p.statusEndpoint?.close();
    p.ops?.stop();
    await p.resumer?.stop();
    if (p.grpcServer) await shutdownGrpcServer(p.grpcServer);
    await p.ops?.drain();
    p.registry?.stop();
    p.clients?.close();
    await p.meta?.close();
    await p.metricsEndpoint?.close();
    this.parts = {};
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
