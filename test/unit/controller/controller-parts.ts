/**
 * The controller's table machinery (metadata store, store registry, segment work, table operations,
 * store removal) over a real LevelDB and real segment stores in this process, wired as the server
 * wires them, with the registry on a clock the test moves: a store is "dead" once the test moves the
 * clock past the timeout, and live again with its next heartbeat, while its server keeps running.
 */
import * as net from 'node:net';
import * as path from 'node:path';
import { MetadataStore } from '../../../controller/metadata/metadata-store';
import { SegmentStoreClients } from '../../../controller/service/segment-store-clients';
import { SegmentWork } from '../../../controller/service/segment-work';
import { StoreRegistry } from '../../../controller/service/store-registry';
import { StoreRemoval } from '../../../controller/service/store-removal';
import { TableOperations } from '../../../controller/service/table-operations';
import { SegmentStoreServer } from '../../../segmentstore/server';
import { silentLogger } from '../../../server-kit/log';
import { tempDir } from '../../harness/process';

/** The registry's store timeout. */
export const STORE_TIMEOUT_MS = 500;

/** What a test may choose of the parts. */
export interface PartsOptions {
  /** @default 300 */
  createWaitMs?: number;
  /** SegmentWork's pause after each segment call (> 0 makes the calls sequential). @default 0 */
  pauseAfterSegmentMs?: number;
}

/** A controller's parts without its gRPC server; dispose with `await using`. */
export class ControllerParts {
  /** The registry's clock. */
  readonly clock = { now: 1_000_000 };
  readonly registry: StoreRegistry;
  readonly clients = new SegmentStoreClients(2_000);
  readonly ops: TableOperations;
  readonly removal: StoreRemoval;
  private readonly stores: SegmentStoreServer[] = [];

  private constructor(
    readonly meta: MetadataStore,
    private readonly dir: { path: string; dispose(): void },
    options: PartsOptions,
  ) {
    this.registry = new StoreRegistry(meta, { heartbeatIntervalMs: 100, storeTimeoutMs: STORE_TIMEOUT_MS, clock: () => this.clock.now }, silentLogger);
    const work = new SegmentWork(meta, this.registry, this.clients, silentLogger, options.pauseAfterSegmentMs ?? 0);
    const opsOptions = { createWaitMs: options.createWaitMs ?? 300 };
    this.ops = new TableOperations(meta, this.registry, work, opsOptions, silentLogger);
    this.removal = new StoreRemoval(meta, this.registry, this.ops, opsOptions, silentLogger);
  }

  /** Parts with scope `s` created. */
  static async start(options: PartsOptions = {}): Promise<ControllerParts> {
    const dir = tempDir('kvt-ctl-parts-');
    const meta = await MetadataStore.open(path.join(dir.path, 'controller'));
    const parts = new ControllerParts(meta, dir, options);
    parts.registry.start();
    await meta.createScope('s', 0);
    return parts;
  }

  /** Starts a segment store in this process and registers it. */
  async startStore(): Promise<SegmentStoreServer> {
    const dataDir = path.join(this.dir.path, `store-${this.stores.length}`);
    const store = await SegmentStoreServer.start({ port: 0, dataDir }, { log: silentLogger });
    this.stores.push(store);
    await this.registry.register(store.storeId, store.address);
    return store;
  }

  /** Registers `storeId` at an address nothing listens on: live until the clock moves, its calls fail. */
  async registerUnreachable(storeId: string): Promise<void> {
    await this.registry.register(storeId, await closedAddress());
  }

  /** Moves the registry's clock past the timeout: every store is dead but those in `live`, which heartbeat. */
  async killStoresBut(...live: SegmentStoreServer[]): Promise<void> {
    this.clock.now += STORE_TIMEOUT_MS + 1;
    for (const store of live) await this.heartbeat(store);
    await this.registry.refreshLiveness();
  }

  /** A heartbeat of `store`: it is live (again). */
  async heartbeat(store: SegmentStoreServer): Promise<void> {
    if (!(await this.registry.heartbeat(store.storeId, store.address))) throw new Error(`store ${store.storeId} must register again`);
  }

  /** The segment ids `store` hosts, ascending. */
  async segmentsOn(store: SegmentStoreServer): Promise<string[]> {
    return (await store.engine.listSegments()).map((s) => s.segmentId).sort((a, b) => Number(a) - Number(b));
  }

  /** The segment ids of table `s/<table>`, by partition. */
  segmentsOf(table: string): string[] {
    return this.meta.getTable('s', table)?.partitions.map((p) => p.segmentId) ?? [];
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.registry.stop();
    this.ops.stop();
    await this.ops.drain();
    this.clients.close();
    for (const store of this.stores) await store.stop();
    await this.meta.close();
    this.dir.dispose();
  }
}

/** `127.0.0.1:<port>` of a port just closed: connections to it are refused. */
async function closedAddress(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `127.0.0.1:${port}`;
}

/** Resolves once `check()` holds, polling; rejects naming `what` after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
