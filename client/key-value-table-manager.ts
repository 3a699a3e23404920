/**
 * Control plane of kvt: scopes, key-value tables and the segment-store registry, through the
 * controller. Names are `[A-Za-z0-9.-]{1,250}` and partitionCount 1–1024, checked here before any
 * call and again by the controller. Reads and deletes are retried on UNAVAILABLE; creates and store
 * removals only when the request surely never reached the controller (so `true` / `false` stay truthful).
 */
import type {
  CreateScopeResponse,
  CreateTableResponse,
  DeleteScopeResponse,
  DeleteTableResponse,
  ListScopesResponse,
  ListSegmentStoresResponse,
  ListTablesResponse,
  RemoveSegmentStoreResponse,
  TableDescription,
  TableInfo,
  TableName,
  ReplacedPartition as WireReplacedPartition,
} from '../proto/messages';
import { ObjectClosedError } from './errors';
import { callUnary, Connections } from './internal/connections';
import { backoffMs, isTransient, sleep, surelyNotSent } from './internal/retry';
import { toKvtError } from './internal/status-to-error';
import { checkBoolean, checkPartitionCount, checkStoreId } from './internal/validation';
import { checkName } from './key-value-table-factory';
import { addContents, fromWire, KeyValueTableDescription } from './table-description';
import { checkClientOptions, ClientOptions, defaultClientOptions, mergeOptions } from './options';

/** The configuration of a key-value table. */
export interface KeyValueTableConfiguration {
  /** Number of partitions (1–1024), fixed at creation. */
  partitionCount: number;
}

/** A registered segment store. */
export interface SegmentStoreDescription {
  id: string;
  address: string;
  live: boolean;
  /** How long ago the controller last heard from it (after a controller restart: at most since the restart). */
  lastHeartbeatAgeMs: number;
  /** Segments (partitions of any table) it owns. */
  segmentCount: number;
}

/** A partition whose segment was on a removed segment store and now has a new one on a live store. */
export interface ReplacedPartition {
  scope: string;
  /** The table's name. */
  name: string;
  partition: number;
  /** The live store owning the new segment. */
  storeId: string;
}

/** What {@link KeyValueTableManager.removeSegmentStore} did. */
export interface SegmentStoreRemoval {
  /** false when the store had been removed before: the rest reports that removal. */
  removed: boolean;
  id: string;
  /** The store's last address. */
  address: string;
  /** Partitions of ACTIVE tables whose data stayed on the store: they start again empty (`force`). */
  lostPartitions: ReplacedPartition[];
  /** Partitions that held no data yet (their table was being created). */
  placedPartitions: ReplacedPartition[];
  /** Tables being deleted: their segments on the store count as deleted. */
  deletingTables: KeyValueTableInfo[];
  /** Tables the controller is still completing because a store it needs is unreachable; it goes on by itself. */
  unfinishedTables: KeyValueTableInfo[];
}

/** A table as listed by {@link KeyValueTableManager.listKeyValueTables}. */
export interface KeyValueTableInfo {
  scope: string;
  name: string;
}

export { checkPartitionCount };

/** Options of {@link KeyValueTableManager}. */
export type KeyValueTableManagerOptions = ClientOptions;

/** Creates, lists and deletes scopes and key-value tables. */
export class KeyValueTableManager implements AsyncDisposable {
  private readonly options: ClientOptions;
  private readonly connections: Connections;
  private closed = false;

  constructor(options: Partial<KeyValueTableManagerOptions> = {}) {
    this.options = mergeOptions(defaultClientOptions(), options);
    checkClientOptions(this.options);
    this.connections = new Connections(this.options.controller, { tls: this.options.tls, token: this.options.token });
  }

  /** Creates a scope; false when it already exists. */
  async createScope(scope: string): Promise<boolean> {
    checkName('scope', scope);
    return (await this.call<CreateScopeResponse>('CreateScope', { scope }, false)).created;
  }

  /** Deletes an empty scope; false when it is missing. @throws InvalidArgumentError while it holds tables. */
  async deleteScope(scope: string): Promise<boolean> {
    checkName('scope', scope);
    return (await this.call<DeleteScopeResponse>('DeleteScope', { scope }, false)).deleted;
  }

  /** The names of all scopes. */
  async *listScopes(): AsyncGenerator<string> {
    const response = await this.call<ListScopesResponse>('ListScopes', {}, true);
    yield* response.scopes;
  }

  /** The registered segment stores. */
  async listSegmentStores(): Promise<SegmentStoreDescription[]> {
    const response = await this.call<ListSegmentStoresResponse>('ListSegmentStores', {}, true);
    return response.stores.map((s) => ({
      id: s.storeId,
      address: s.address,
      live: s.live,
      lastHeartbeatAgeMs: Number(s.lastHeartbeatAgeMs),
      segmentCount: s.segmentCount,
    }));
  }

  /**
   * Retires a dead segment store for good: its id is refused from then on (the process must start
   * again from a wiped data directory, as a new store). Partitions of tables being created move to
   * live stores, its segments of tables being deleted count as deleted, and with `force` partitions
   * of ACTIVE tables get new, empty segments on live stores: their data on the store is abandoned.
   * Idempotent: a store removed before resolves `removed: false` with that removal's report.
   * @throws SegmentStoreLiveError while the controller hears from the store
   * @throws SegmentStoreHoldsDataError without `force` when it holds partitions of ACTIVE tables (the message names them)
   * @throws SegmentStoreNotFoundError for an unknown id
   */
  async removeSegmentStore(id: string, options: { force?: boolean } = {}): Promise<SegmentStoreRemoval> {
    checkStoreId(id);
    checkBoolean('force', options.force);
    const r = await this.call<RemoveSegmentStoreResponse>('RemoveSegmentStore', { storeId: id, force: options.force === true }, false);
    const partition = (p: WireReplacedPartition): ReplacedPartition => ({ scope: p.scope, name: p.table, partition: p.partition, storeId: p.newStoreId });
    const table = (t: TableName): KeyValueTableInfo => ({ scope: t.scope, name: t.table });
    return {
      removed: r.removed,
      id,
      address: r.address,
      lostPartitions: r.lostPartitions.map(partition),
      placedPartitions: r.placedPartitions.map(partition),
      deletingTables: r.deletingTables.map(table),
      unfinishedTables: r.unfinishedTables.map(table),
    };
  }

  /**
   * Creates a table and its partitions' segments; resolves once it is usable. false when it exists
   * (whatever its configuration). @throws ScopeNotFoundError, InvalidArgumentError, UnavailableError.
   */
  async createKeyValueTable(scope: string, name: string, config: KeyValueTableConfiguration): Promise<boolean> {
    checkName('scope', scope);
    checkName('table', name);
    const partitionCount = checkPartitionCount(config);
    const request = { scope, table: name, config: { partitionCount } };
    return (await this.call<CreateTableResponse>('CreateTable', request, false, `${scope}/${name}`)).created;
  }

  /** The configuration of a table. @throws TableNotFoundError. */
  async getKeyValueTableConfiguration(scope: string, name: string): Promise<KeyValueTableConfiguration> {
    checkName('scope', scope);
    checkName('table', name);
    const info = await this.call<TableInfo>('GetTable', { scope, table: name }, true, `${scope}/${name}`);
    return { partitionCount: info.config?.partitionCount ?? 0 };
  }

  /**
   * A table's state and the placement of every partition: its hash range, its table segment and the
   * store that owns it (live or dead, as the controller judges now), in any state, so a table stuck
   * CREATING or DELETING shows which store it waits for. With `contents`, each partition also says how
   * many live entries its segment holds and their key + value bytes (each store counts them by reading
   * them, so this costs a scan of the table); a store that cannot answer leaves the error there instead.
   * @throws TableNotFoundError, ScopeNotFoundError, InvalidArgumentError
   */
  async describeKeyValueTable(scope: string, name: string, options: { contents?: boolean } = {}): Promise<KeyValueTableDescription> {
    checkName('scope', scope);
    checkName('table', name);
    checkBoolean('contents', options.contents);
    const deadline = Date.now() + this.options.timeoutMs;
    const description = fromWire(await this.call<TableDescription>('DescribeTable', { scope, table: name }, true, `${scope}/${name}`));
    if (options.contents === true) await addContents(description, this.connections, deadline);
    return description;
  }

  /** Updates a table's configuration. @throws InvalidArgumentError when partitionCount would change. */
  async updateKeyValueTable(scope: string, name: string, config: KeyValueTableConfiguration): Promise<KeyValueTableConfiguration> {
    checkName('scope', scope);
    checkName('table', name);
    const partitionCount = checkPartitionCount(config);
    const info = await this.call<TableInfo>('UpdateTable', { scope, table: name, config: { partitionCount } }, true, `${scope}/${name}`);
    return { partitionCount: info.config?.partitionCount ?? 0 };
  }

  /** Deletes a table and all its data; false when it is missing. */
  async deleteKeyValueTable(scope: string, name: string): Promise<boolean> {
    checkName('scope', scope);
    checkName('table', name);
    return (await this.call<DeleteTableResponse>('DeleteTable', { scope, table: name }, false, `${scope}/${name}`)).deleted;
  }

  /** The tables of a scope, fetched page by page (`pageSize` per controller call; 0 = its default). */
  async *listKeyValueTables(scope: string, options: { pageSize?: number } = {}): AsyncGenerator<KeyValueTableInfo> {
    checkName('scope', scope);
    let token = '';
    do {
      const page = await this.call<ListTablesResponse>('ListTables', { scope, continuationToken: token, limit: options.pageSize ?? 0 }, true);
      for (const name of page.tables) yield { scope, name };
      token = page.continuationToken;
    } while (token);
  }

  /** Closes the channel to the controller. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.connections.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** One controller call with the deadline and the retry policy (see the module comment). */
  private async call<Res>(method: string, request: object, idempotent: boolean, table?: string): Promise<Res> {
    const deadline = Date.now() + this.options.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new ObjectClosedError('the key-value table manager is closed');
      try {
        return await callUnary<object, Res>(this.connections.controller(), method, request, deadline);
      } catch (err) {
        if (this.closed) throw new ObjectClosedError('the key-value table manager is closed', { cause: err });
        const retryable = isTransient(err) && (idempotent || surelyNotSent(err));
        const wait = backoffMs(attempt, this.options.retry);
        if (!retryable || attempt > this.options.retry.maxRetries || Date.now() + wait >= deadline) {
          throw toKvtError(err, { table, maybeApplied: isTransient(err) && !idempotent && !surelyNotSent(err) });
        }
        this.options.logger?.debug?.('kvt client retrying', { method, attempt, waitMs: wait });
        await sleep(wait);
      }
    }
  }
}
