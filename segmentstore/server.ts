/**
 * The segment-store server: engine (LevelDB) + gRPC service + controller registration.
 * Lifecycle `created → starting → running → stopping → stopped | failed`; start opens the engine,
 * binds, then registers; stop() (idempotent) runs in reverse: stop registering, stop accepting
 * calls and let in-flight ones finish, finish the flush in progress, close LevelDB.
 *
 * With a controller, the store serves calls only once the controller has accepted this process's
 * registration, and never after it refused the store as removed from the cluster: a removed store
 * restarted on its old data directory must not serve the segments it kept to clients whose routing
 * still names them (their writes would be acknowledged and lost). Calls meanwhile get UNAVAILABLE
 * without running, which clients retry. Once accepted, the store serves through controller outages.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { joinHostPort } from '../server-kit/address';
import { ErrorCodes } from '../proto/error-codes';
import { metricsService } from '../proto/load';
import { withAuth } from '../server-kit/auth';
import { guardHandlers } from '../server-kit/guard';
import { jsonLogger, Logger, rateLimitedWarning, RateLimitedWarning } from '../server-kit/log';
import { FatalSignal, PermanentFailure } from '../server-kit/main';
import { KvtFault } from '../server-kit/fault';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../server-kit/grpc-server';
import { ProcessHealth } from '../server-kit/health';
import type { HttpEndpoint } from '../server-kit/http-server';
import { newMetricsRegistry } from '../server-kit/metrics/metrics-registry';
import { startMetricsServer } from '../server-kit/metrics/metrics-server';
import { metricsHandlers } from '../server-kit/metrics/metrics-service';
import { RpcMetrics } from '../server-kit/metrics/rpc-metrics';
import { StoreMetrics } from '../server-kit/metrics/store-metrics';
import { outgoingCredentials, readTlsFiles, serverCredentials, TlsMaterial } from '../server-kit/tls';
import { defaultSegmentStoreConfig, SegmentStoreConfig } from './config';
import { ControllerRegistration, loadStoreId } from './registration';
import type { ExecuteStreams } from './service/execute-stream';
import { InFlightBudget } from './service/in-flight-budget';
import { answerHolding, executeStreams, segmentStoreDefinition, segmentStoreHandlers } from './service/segment-store-service';
import { SegmentEngine, StorageLockedError } from './storage/segment-engine';
import type { SegmentEngineOptions } from './storage/segments/segment-state';

/** Longest a stop waits for open Execute streams to answer what is in flight. */
const STREAM_CLOSE_GRACE_MS = 5_000;

function sleepUnref(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Methods that need the admin token when tokens are configured (the controller's segment lifecycle calls). */
export const SEGMENT_STORE_ADMIN_METHODS: ReadonlySet<string> = new Set(['CreateSegment', 'DeleteSegment']);

/** Lifecycle states of {@link SegmentStoreServer}. */
export type ServerState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** Extra knobs for in-process use (tests, benchmarks). */
export interface SegmentStoreServerOptions {
  /** @default a JSON logger at config.logLevel */
  log?: Logger;
  /** Engine options beyond the config (e.g. an injected clock). */
  engine?: SegmentEngineOptions;
}

/** One running segment store. Start with {@link SegmentStoreServer.start}. */
export class SegmentStoreServer {
  private stateName: ServerState = 'created';
  private grpcServer: grpc.Server | undefined;
  private registration: ControllerRegistration | undefined;
  private engineRef: SegmentEngine | undefined;
  private streams: ExecuteStreams | undefined;
  private stopping: Promise<void> | undefined;
  /** Whether calls are served (see the file's comment); a store without a controller serves at once. */
  private serving: 'waiting' | 'serving' | 'removed';
  /** The bound port. */
  port = 0;
  /** The stable store id (from `<dataDir>/STORE_ID`). */
  storeId = '';
  readonly log: Logger;
  /** The `call rejected` warning of the token check (flushed as the store stops). */
  private readonly rejectedCalls: RateLimitedWarning;
  /** The warning of requests refused by the in-flight bound (flushed as the store stops). */
  private readonly overloaded: RateLimitedWarning;
  private readonly fatalSignal = new FatalSignal();
  /** `grpc.health.v1`: SERVING while calls are served (see the file's comment), NOT_SERVING from the start of a stop or a fail-stop. */
  readonly health = new ProcessHealth('kvt.v1.SegmentStore');
  /** This store's metrics: served at `/metrics` with `metricsPort`, and to the controller's status page over gRPC. */
  readonly metrics: Registry;
  /** The store's own metrics, also the engine's observer (flushes, log writes, applies). */
  private readonly storeMetrics: StoreMetrics;
  private metricsEndpoint: HttpEndpoint | undefined;

  private constructor(
    readonly config: SegmentStoreConfig,
    private readonly options: SegmentStoreServerOptions,
  ) {
    this.log = options.log ?? jsonLogger('segmentstore', config.logLevel);
    this.rejectedCalls = rateLimitedWarning(this.log, 'call rejected', 'code');
    this.overloaded = rateLimitedWarning(this.log, 'request refused: segment store overloaded', 'request');
    this.serving = config.controller ? 'waiting' : 'serving';
    this.metrics = newMetricsRegistry(config.metricsPort !== undefined);
    this.storeMetrics = new StoreMetrics(this.metrics, () => this.engineRef);
    void this.fatalSignal.promise.then(() => this.health.notServing());
  }

  /**
   * Resolves with the error when a storage write fails (see SegmentEngineOptions.onStorageFailure), or
   * with a PermanentFailure when the controller refuses the store as removed; never resolves otherwise.
   * The store then answers every call UNAVAILABLE: the process should stop (and, after a storage
   * failure, be restarted), which `kvt segmentstore` does by exiting 1.
   */
  get fatal(): Promise<Error> {
    return this.fatalSignal.promise;
  }

  /**
   * Starts a store with `config` (missing fields take their defaults).
   * @throws Error with one clear line: data directory in use, port taken, …
   */
  static async start(config: Partial<SegmentStoreConfig>, options: SegmentStoreServerOptions = {}): Promise<SegmentStoreServer> {
    const server = new SegmentStoreServer({ ...defaultSegmentStoreConfig(), ...config }, options);
    await server.run();
    return server;
  }

  get state(): ServerState {
    return this.stateName;
  }

  /** The storage engine (in-process tests and benchmarks). */
  get engine(): SegmentEngine {
    if (!this.engineRef) throw new Error('segment store is not running');
    return this.engineRef;
  }

  /** `host:port` this store is reached on. */
  get address(): string {
    return this.config.advertiseAddress ?? joinHostPort(this.config.host, this.port);
  }

  private async run(): Promise<void> {
    this.stateName = 'starting';
    try {
      // TLS files are read first: a bad one fails the start before the data directory is locked.
      const tls = readTlsFiles({ certFile: this.config.tlsCert, keyFile: this.config.tlsKey, caFile: this.config.tlsCa });
      await this.openEngine();
      const budget = new InFlightBudget(this.config.maxInFlightMb * 1024 * 1024, (request, bytes) => {
        this.overloaded({ request, bytes, maxInFlightMb: this.config.maxInFlightMb });
      });
      this.grpcServer = newGrpcServer({ interceptors: [answerHolding(budget), new RpcMetrics(this.metrics).interceptor] });
      // The service sees the engine through its operation counters (store-metrics.ts).
      const engine = this.storeMetrics.observe(this.engineRef!);
      this.streams = executeStreams(engine, this.log, budget);
      const handlers = segmentStoreHandlers(engine, this.log, this.streams, budget);
      const gated = this.config.controller ? guardHandlers(handlers, () => this.refusal()) : handlers;
      this.grpcServer.addService(segmentStoreDefinition(), withAuth(gated, this.config, SEGMENT_STORE_ADMIN_METHODS, this.rejectedCalls));
      this.grpcServer.addService(metricsService(), withAuth(metricsHandlers(this.metrics), this.config, new Set()));
      this.health.addTo(this.grpcServer);
      this.port = await bindGrpcServer(this.grpcServer, this.config.host, this.config.port, serverCredentials(tls));
      if (this.config.metricsPort !== undefined) this.metricsEndpoint = await startMetricsServer(this.metrics, this.config.host, this.config.metricsPort);
      this.stateName = 'running';
      this.log.info('segment store started', { port: this.port, storeId: this.storeId, address: this.address, dataDir: this.config.dataDir, metricsPort: this.metricsEndpoint?.port });
      if (this.config.controller) this.register(this.config.controller, tls);
      else this.health.serving();
    } catch (err) {
      await this.release();
      this.stateName = 'failed';
      throw err;
    }
  }

  /** Starts registering with the controller, over TLS when this store runs TLS, with the admin token. */
  private register(controller: string, tls: TlsMaterial): void {
    this.registration = new ControllerRegistration({
      controller,
      storeId: this.storeId,
      address: this.address,
      log: this.log,
      retryMinMs: this.config.registerRetryMinMs,
      retryMaxMs: this.config.registerRetryMaxMs,
      credentials: outgoingCredentials(tls),
      token: this.config.adminToken,
      onAccepted: () => {
        if (this.serving === 'waiting') this.serving = 'serving';
        if (this.serving === 'serving' && this.stateName === 'running') this.health.serving();
      },
      onRemoved: (reason) => this.onRemoved(reason),
    });
    this.registration.start();
  }

  /** Why a call is not served now, if it is not (see the file's comment). */
  private refusal(): KvtFault | undefined {
    if (this.serving === 'serving') return undefined;
    return new KvtFault(
      ErrorCodes.UNAVAILABLE,
      this.serving === 'removed'
        ? `segment store ${this.storeId} was removed from the cluster; the request was not run`
        : `segment store ${this.storeId} does not serve until the controller accepts its registration; the request was not run`,
    );
  }

  /** The controller refused this store as removed: stop serving for good, and fail (the process exits 1). */
  private onRemoved(reason: string): void {
    this.serving = 'removed';
    this.health.notServing();
    void this.streams?.close();
    const dataDir = path.resolve(this.config.dataDir);
    this.log.error('controller refused the registration: this store was removed from the cluster; wipe its data directory', { reason, dataDir });
    this.fatalSignal.raise(new PermanentFailure(`controller refused the registration: ${reason} (data directory ${dataDir})`));
  }

  private async openEngine(): Promise<void> {
    const dataDir = path.resolve(this.config.dataDir);
    fs.mkdirSync(dataDir, { recursive: true });
    try {
      this.engineRef = await SegmentEngine.open(path.join(dataDir, 'leveldb'), {
        expirySweepIntervalMs: this.config.expirySweepIntervalMs,
        chunkCacheBytes: this.config.chunkCacheMb * 1024 * 1024,
        directoryCacheBytes: this.config.directoryCacheMb * 1024 * 1024,
        writeBufferBytes: this.config.writeBufferMb * 1024 * 1024,
        logBytes: this.config.durableLogMb * 1024 * 1024,
        logApplyMs: this.config.durableLogApplyMs,
        onBackgroundError: (err, task) => this.log.error('background task failed', { task, err }),
        onStorageFailure: (err) => {
          this.log.error('storage write failed: refusing every call; restart the segment store to recover', { err });
          this.fatalSignal.raise(err);
        },
        observer: this.storeMetrics,
        ...this.options.engine,
      });
    } catch (err) {
      if (err instanceof StorageLockedError) {
        throw new Error(`data directory ${this.config.dataDir} is in use by another segment store`, { cause: err });
      }
      throw new Error(`cannot open data directory ${this.config.dataDir}: ${(err as Error).message}`, { cause: err });
    }
    // The id is read after the lock is ours, so two processes never race on creating it.
    this.storeId = loadStoreId(dataDir);
  }

  private async release(): Promise<void> {
    // NOT_SERVING first, so that probes and balancers stop sending work while the rest winds down.
    this.health.close();
    await this.registration?.stop();
    // Open Execute streams would hold the gRPC shutdown for its whole grace period: end them first
    // (each once its messages in flight are answered), bounded by the same grace.
    if (this.streams) await Promise.race([this.streams.close(), sleepUnref(STREAM_CLOSE_GRACE_MS)]);
    if (this.grpcServer) await shutdownGrpcServer(this.grpcServer);
    await this.engineRef?.close();
    await this.metricsEndpoint?.close();
  }

  /** Graceful stop; idempotent (every call resolves when the store is stopped). */
  stop(): Promise<void> {
    if (this.stateName === 'created' || this.stateName === 'failed') return Promise.resolve();
    this.stopping ??= (async () => {
      this.stateName = 'stopping';
      try {
        await this.release();
        this.stateName = 'stopped';
        this.rejectedCalls.flush();
        this.overloaded.flush();
        this.log.info('segment store stopped', { port: this.port, storeId: this.storeId });
      } catch (err) {
        this.stateName = 'failed';
        throw err;
      }
    })();
    return this.stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
