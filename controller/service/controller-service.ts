/**
 * gRPC handlers of `kvt.v1.Controller`. Each validates its input, reads or changes the metadata, and
 * lets `unary()` map a thrown {@link KvtFault} to the gRPC status plus `kvt-error-code` trailer.
 */
import type * as grpc from '@grpc/grpc-js';
import { ErrorCodes } from '../../proto/error-codes';
import * as m from '../../proto/messages';
import { unary } from '../../server-kit/status';
import { KvtFault, invalidArgument } from '../../server-kit/fault';
import type { Logger } from '../../server-kit/log';
import type { MetadataStore } from '../metadata/metadata-store';
import { hashRange, TableRecord, tableKey } from '../metadata/records';
import type { StoreRegistry } from './store-registry';
import type { StoreRemoval } from './store-removal';
import type { TableOperations } from './table-operations';
import { decodeContinuationToken, effectiveListLimit, encodeContinuationToken, validateName, validatePartitionCount, validateStoreId, validateStoreIdentity } from './validation';

/** What the handlers work with. */
export interface ControllerServiceDeps {
  meta: MetadataStore;
  registry: StoreRegistry;
  ops: TableOperations;
  removal: StoreRemoval;
  heartbeatIntervalMs: number;
  logger: Logger;
  /** @default Date.now */
  clock?: () => number;
}

/**
 * Methods that need the admin token when tokens are configured: everything that changes metadata,
 * and the segment stores' own registration and heartbeats. The rest accept the data token too.
 */
export const CONTROLLER_ADMIN_METHODS: ReadonlySet<string> = new Set([
  'CreateScope',
  'DeleteScope',
  'CreateTable',
  'UpdateTable',
  'DeleteTable',
  'RegisterSegmentStore',
  'Heartbeat',
  'RemoveSegmentStore',
]);

/** The handler map for `server.addService(controllerService(), …)`. */
export function controllerHandlers(deps: ControllerServiceDeps): grpc.UntypedServiceImplementation {
  const onInternal = (err: unknown) => deps.logger.error('internal error', { err });
  const h = new Handlers(deps);
  const wrap = <Req, Res>(fn: (req: Req) => Promise<Res>) => unary<Req, Res>((req) => fn.call(h, req), onInternal);
  return {
    CreateScope: wrap(h.createScope),
    DeleteScope: wrap(h.deleteScope),
    ListScopes: wrap(h.listScopes),
    CreateTable: wrap(h.createTable),
    GetTable: wrap(h.getTable),
    UpdateTable: wrap(h.updateTable),
    DeleteTable: wrap(h.deleteTable),
    ListTables: wrap(h.listTables),
    GetRouting: wrap(h.getRouting),
    DescribeTable: wrap(h.describeTable),
    RegisterSegmentStore: wrap(h.registerSegmentStore),
    Heartbeat: wrap(h.heartbeat),
    ListSegmentStores: wrap(h.listSegmentStores),
    RemoveSegmentStore: wrap(h.removeSegmentStore),
  };
}

class Handlers {
  private readonly clock: () => number;

  constructor(private readonly d: ControllerServiceDeps) {
    this.clock = d.clock ?? Date.now;
  }

  async createScope(req: m.ScopeRequest): Promise<m.CreateScopeResponse> {
    validateName('scope', req.scope);
    return { created: await this.d.meta.createScope(req.scope, this.clock()) };
  }

  async deleteScope(req: m.ScopeRequest): Promise<m.DeleteScopeResponse> {
    validateName('scope', req.scope);
    const outcome = await this.d.meta.deleteScope(req.scope);
    if (outcome === 'not-empty') {
      const count = this.d.meta.tablesInScope(req.scope).length;
      throw invalidArgument(`scope ${req.scope} holds ${count} table(s); delete them before the scope`);
    }
    return { deleted: outcome === 'deleted' };
  }

  async listScopes(): Promise<m.ListScopesResponse> {
    return { scopes: this.d.meta.listScopes() };
  }

  async createTable(req: m.CreateTableRequest): Promise<m.CreateTableResponse> {
    validateName('scope', req.scope);
    validateName('table', req.table);
    const partitionCount = req.config?.partitionCount ?? 0;
    validatePartitionCount(partitionCount);
    return { created: await this.d.ops.create(req.scope, req.table, partitionCount) };
  }

  async getTable(req: m.TableRequest): Promise<m.TableInfo> {
    return tableInfo(this.existingTable(req));
  }

  async updateTable(req: m.UpdateTableRequest): Promise<m.TableInfo> {
    const record = this.existingTable(req);
    // Nothing is mutable yet: the only configuration, partitionCount, is fixed at creation.
    if (req.config && req.config.partitionCount !== record.partitionCount) {
      throw invalidArgument(
        `partitionCount cannot change: table ${tableKey(record.scope, record.table)} has ${record.partitionCount} partitions; ` + `the update asks for ${req.config.partitionCount}`,
      );
    }
    return tableInfo(record);
  }

  async deleteTable(req: m.TableRequest): Promise<m.DeleteTableResponse> {
    validateName('scope', req.scope);
    validateName('table', req.table);
    return { deleted: await this.d.ops.delete(req.scope, req.table) };
  }

  /** Every table that exists, in any state (as CreateTable's created=false counts them), by name. */
  async listTables(req: m.ListTablesRequest): Promise<m.ListTablesResponse> {
    validateName('scope', req.scope);
    const after = decodeContinuationToken(req.continuationToken);
    if (!this.d.meta.hasScope(req.scope)) throw scopeNotFound(req.scope);
    const limit = effectiveListLimit(req.limit);
    const rest = this.d.meta.tablesInScope(req.scope).filter((t) => t.table > after);
    const page = rest.slice(0, limit).map((t) => t.table);
    const more = rest.length > limit;
    return { tables: page, continuationToken: more ? encodeContinuationToken(page[page.length - 1]) : '' };
  }

  async getRouting(req: m.TableRequest): Promise<m.Routing> {
    const record = this.existingTable(req);
    if (record.state !== 'ACTIVE') {
      throw new KvtFault(ErrorCodes.TABLE_NOT_ACTIVE, `table ${tableKey(record.scope, record.table)} is ${record.state}, not ACTIVE`);
    }
    // Liveness is judged now, so the generation returned matches the liveness reported.
    await this.d.registry.refreshLiveness();
    return {
      scope: record.scope,
      table: record.table,
      partitionCount: record.partitionCount,
      generation: this.d.meta.generation,
      partitions: this.partitions(record),
    };
  }

  /** GetTable and GetRouting's partitions together, for a table in any state. */
  async describeTable(req: m.TableRequest): Promise<m.TableDescription> {
    const record = this.existingTable(req);
    await this.d.registry.refreshLiveness();
    return { table: tableInfo(record), partitions: this.partitions(record) };
  }

  /** Each partition of `record` with its hash range, segment and owning store, as routing names them. */
  private partitions(record: TableRecord): m.Partition[] {
    const n = record.partitionCount;
    return record.partitions.map((p) => {
      // A replacement segment is routed to only once it exists; until then the old one (on a removed store).
      const { segmentId, storeId } = p.replaces ?? p;
      const range = hashRange(p.index, n);
      return {
        index: p.index,
        hashLow: range.low,
        hashHigh: range.high,
        segmentId,
        storeId,
        storeAddress: this.d.meta.storeAddress(storeId),
        storeLive: this.d.registry.isLive(storeId),
      };
    });
  }

  async registerSegmentStore(req: m.RegisterSegmentStoreRequest): Promise<m.RegisterSegmentStoreResponse> {
    validateStoreIdentity(req.storeId, req.address);
    await this.d.registry.register(req.storeId, req.address);
    return { heartbeatIntervalMs: this.d.heartbeatIntervalMs };
  }

  async heartbeat(req: m.HeartbeatRequest): Promise<m.HeartbeatResponse> {
    if (req.address !== '') validateStoreIdentity(req.storeId, req.address);
    return { known: await this.d.registry.heartbeat(req.storeId, req.address), heartbeatIntervalMs: this.d.heartbeatIntervalMs };
  }

  async listSegmentStores(): Promise<m.ListSegmentStoresResponse> {
    return { stores: this.d.registry.list() };
  }

  async removeSegmentStore(req: m.RemoveSegmentStoreRequest): Promise<m.RemoveSegmentStoreResponse> {
    validateStoreId(req.storeId);
    return this.d.removal.remove(req.storeId, req.force === true);
  }

  /** The table named by `req`, with SCOPE_NOT_FOUND / TABLE_NOT_FOUND when missing. */
  private existingTable(req: { scope: string; table: string }): TableRecord {
    validateName('scope', req.scope);
    validateName('table', req.table);
    if (!this.d.meta.hasScope(req.scope)) throw scopeNotFound(req.scope);
    const record = this.d.meta.getTable(req.scope, req.table);
    if (!record) throw new KvtFault(ErrorCodes.TABLE_NOT_FOUND, `table ${tableKey(req.scope, req.table)} does not exist`);
    return record;
  }
}

function scopeNotFound(scope: string): KvtFault {
  return new KvtFault(ErrorCodes.SCOPE_NOT_FOUND, `scope ${scope} does not exist`);
}

function tableInfo(record: TableRecord): m.TableInfo {
  return {
    scope: record.scope,
    table: record.table,
    config: { partitionCount: record.partitionCount },
    state: record.state,
    createdAtMs: String(record.createdAtMs),
  };
}
