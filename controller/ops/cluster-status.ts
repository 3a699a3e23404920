/**
 * What the status page shows, as one JSON document (`GET /api/status`): the segment stores with their
 * liveness and figures, and every scope's tables with each partition's segment and store, as routing
 * names them. Read from the controller's own state, so it costs the controller nothing but the
 * sampling of the live stores' operation counters (store-rates.ts).
 */
import type { MetadataStore } from '../metadata/metadata-store';
import { hashRange, TableRecord } from '../metadata/records';
import type { StoreRegistry } from '../service/store-registry';
import type { StoreFigures, StoreRates } from './store-rates';

/** One segment store as the page shows it. */
export interface StoreStatus extends StoreFigures {
  id: string;
  address: string;
  live: boolean;
  lastHeartbeatAgeMs: number;
  /** Segments (partitions of any table) the controller placed on it. */
  segments: number;
}

/** One partition: its hash range, its segment and the store that owns it. */
export interface PartitionStatus {
  index: number;
  hashLow: number;
  hashHigh: number;
  segment: string;
  storeId: string;
  storeAddress: string;
  storeLive: boolean;
}

/** One table of a scope. */
export interface TableStatus {
  name: string;
  state: string;
  partitionCount: number;
  createdAtMs: number;
  partitions: PartitionStatus[];
}

/** The whole document. */
export interface ClusterStatus {
  generatedAtMs: number;
  /** How long a store may be silent before it counts as dead. */
  storeTimeoutMs: number;
  /** How often the page asks again. */
  refreshMs: number;
  summary: { liveStores: number; deadStores: number; scopes: number; tables: number; partitionsOnDeadStores: number };
  stores: StoreStatus[];
  scopes: Array<{ name: string; tables: TableStatus[] }>;
}

/** What {@link clusterStatus} reads. */
export interface ClusterStatusSources {
  meta: MetadataStore;
  registry: StoreRegistry;
  rates: StoreRates;
  storeTimeoutMs: number;
  refreshMs: number;
  /** @default Date.now */
  clock?: () => number;
}

function tableStatus(record: TableRecord, meta: MetadataStore, registry: StoreRegistry): TableStatus {
  return {
    name: record.table,
    state: record.state,
    partitionCount: record.partitionCount,
    createdAtMs: record.createdAtMs,
    partitions: record.partitions.map((p) => {
      // As routing names it: a replacement segment only once it exists (controller-service.ts).
      const { segmentId, storeId } = p.replaces ?? p;
      const range = hashRange(p.index, record.partitionCount);
      return { index: p.index, hashLow: range.low, hashHigh: range.high, segment: segmentId, storeId, storeAddress: meta.storeAddress(storeId), storeLive: registry.isLive(storeId) };
    }),
  };
}

/** The cluster as the page shows it; samples the live stores' figures first (bounded, at most once a second). */
export async function clusterStatus(s: ClusterStatusSources): Promise<ClusterStatus> {
  await s.registry.refreshLiveness();
  const listed = s.registry.list();
  await s.rates.refresh(listed);
  const stores: StoreStatus[] = listed.map((info) => ({
    id: info.storeId,
    address: info.address,
    live: info.live,
    lastHeartbeatAgeMs: Number(info.lastHeartbeatAgeMs),
    segments: info.segmentCount,
    ...s.rates.figuresOf(info.storeId),
  }));
  const scopes = s.meta.listScopes().map((name) => ({ name, tables: s.meta.tablesInScope(name).map((t) => tableStatus(t, s.meta, s.registry)) }));
  const tables = scopes.flatMap((scope) => scope.tables);
  const live = stores.filter((st) => st.live).length;
  return {
    generatedAtMs: (s.clock ?? Date.now)(),
    storeTimeoutMs: s.storeTimeoutMs,
    refreshMs: s.refreshMs,
    summary: {
      liveStores: live,
      deadStores: stores.length - live,
      scopes: scopes.length,
      tables: tables.length,
      partitionsOnDeadStores: tables.reduce((n, t) => n + t.partitions.filter((p) => !p.storeLive).length, 0),
    },
    stores,
    scopes,
  };
}
