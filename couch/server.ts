/**
 * The CouchDB endpoint as a process's server (DESIGN §5): its catalog on a kvt cluster (a manager
 * for creating and deleting tables with the admin token, a factory for the data with the data token),
 * the HTTP application (app.ts) listening on host:port, and a lifecycle `starting → running →
 * stopping → stopped` whose stop ends the longpolls waiting, stops listening, then closes the
 * databases (waiting for their feed indexing) and the client, the reverse of start.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { ClientTlsOptions, KeyValueTableFactory, KeyValueTableManager } from '../client';
import { joinHostPort } from '../server-kit/address';
import type { Logger } from '../server-kit/log';
import type { Stoppable } from '../server-kit/main';
import { readTlsFiles, servesTls } from '../server-kit/tls';
import { buildCouchApp } from './app';
import { KvtCatalog } from './catalog';
import type { CouchConfig } from './config';
import type { CouchContext } from './context';

/** The server's uuid for a scope: stable across restarts, so that replication ids (and checkpoints) are too. */
export function serverUuid(scope: string): string {
  return createHash('sha256').update(`kvt couch scope ${scope}`).digest('hex').slice(0, 32);
}

/** TLS of the endpoint's calls to the cluster: as the servers' own (server-kit/tls.ts outgoingCredentials). */
function clusterTls(config: CouchConfig): ClientTlsOptions | undefined {
  if (config.tlsCa !== undefined) return { ca: fs.readFileSync(config.tlsCa) };
  return config.tlsCert !== undefined ? {} : undefined;
}

/** A running CouchDB endpoint. */
export class CouchServer implements Stoppable {
  private state: 'running' | 'stopping' | 'stopped' = 'running';
  private stopped: Promise<void> | undefined;

  private constructor(
    readonly config: CouchConfig,
    private readonly app: FastifyInstance,
    private readonly context: CouchContext,
    private readonly manager: KeyValueTableManager,
    private readonly factory: KeyValueTableFactory,
    /** The port it listens on. */
    readonly port: number,
  ) {}

  /**
   * Connects to the cluster, creates the scope when missing, and listens.
   * @throws Error "port HOST:PORT is already in use", an unreadable TLS file, an unreachable controller, …
   */
  static async start(config: CouchConfig, logger: Logger): Promise<CouchServer> {
    const material = readTlsFiles({ certFile: config.tlsCert, keyFile: config.tlsKey, caFile: config.tlsCa });
    const tls = clusterTls(config);
    const client = { controller: config.controller, timeoutMs: config.timeoutMs, ...(tls ? { tls } : {}) };
    const manager = new KeyValueTableManager({ ...client, ...tokenOption(config.adminToken ?? config.dataToken) });
    const factory = KeyValueTableFactory.withScope(config.scope, { ...client, ...tokenOption(config.dataToken ?? config.adminToken) });
    const catalog = new KvtCatalog(manager, factory, config.scope);
    const { app, context } = buildCouchApp({
      catalog,
      defaultPartitions: config.partitions,
      maxBodyBytes: config.maxBodyBytes,
      uuid: serverUuid(config.scope),
      tokens: { dataToken: config.dataToken, adminToken: config.adminToken },
      ...(servesTls(material) ? { https: { cert: material.cert!, key: material.key! } } : {}),
      onServerError: (fields) => logger.warn('request failed', fields),
    });
    try {
      if (await manager.createScope(config.scope)) logger.info('scope created', { scope: config.scope });
      await app.listen({ host: config.host, port: config.port });
    } catch (err) {
      await app.close().catch(() => undefined);
      await Promise.all([factory.close(), manager.close()]);
      throw listenError(err, config);
    }
    const port = (app.server.address() as { port: number }).port;
    return new CouchServer(config, app, context, manager, factory, port);
  }

  /** Stops: ends the waits, stops listening, closes the databases and the client. Idempotent. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.state = 'stopping';
      this.context.abortWaits();
      await this.app.close();
      await this.context.catalog.close();
      await Promise.all([this.factory.close(), this.manager.close()]);
      this.state = 'stopped';
    })();
    return this.stopped;
  }

  get running(): boolean {
    return this.state === 'running';
  }
}

function tokenOption(token: string | undefined): { token?: string } {
  return token === undefined ? {} : { token };
}

/** One line for a failed start. */
function listenError(err: unknown, config: CouchConfig): Error {
  const e = err as NodeJS.ErrnoException;
  const address = joinHostPort(config.host, config.port);
  if (e?.code === 'EADDRINUSE') return new Error(`port ${address} is already in use`);
  if (e?.code === 'EADDRNOTAVAIL' || e?.code === 'EACCES') return new Error(`cannot listen on ${address}: ${e.message}`);
  return e instanceof Error ? e : new Error(String(err));
}
