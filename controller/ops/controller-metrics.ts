/**
 * The controller's own metrics, read from its registry and metadata when scraped: segment stores live
 * and dead, scopes, tables by state, and the partitions of tables whose store is dead (what `kvt
 * status` exits non-zero for, and what an alert should watch).
 */
import type { Registry } from 'prom-client';
import { gauge } from '../../server-kit/metrics/metrics-registry';
import type { MetadataStore } from '../metadata/metadata-store';
import { TABLE_STATE_TRANSITIONS } from '../metadata/table-state';
import type { StoreRegistry } from '../service/store-registry';

/** Registers the controller's gauges in `metrics`. */
export function registerControllerMetrics(metrics: Registry, meta: MetadataStore, stores: StoreRegistry): void {
  gauge(metrics, {
    name: 'kvt_controller_segment_stores',
    help: 'Registered segment stores, by liveness (dead: not heard from for --store-timeout-ms).',
    labelNames: ['state'],
    collect() {
      const list = stores.list();
      const live = list.filter((s) => s.live).length;
      this.set({ state: 'live' }, live);
      this.set({ state: 'dead' }, list.length - live);
    },
  });
  gauge(metrics, {
    name: 'kvt_controller_scopes',
    help: 'Scopes.',
    collect() {
      this.set(meta.listScopes().length);
    },
  });
  gauge(metrics, {
    name: 'kvt_controller_tables',
    help: 'Key-value tables, by state.',
    labelNames: ['state'],
    collect() {
      const counts = new Map<string, number>(Object.keys(TABLE_STATE_TRANSITIONS).map((s) => [s, 0]));
      for (const scope of meta.listScopes()) for (const t of meta.tablesInScope(scope)) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  gauge(metrics, {
    name: 'kvt_controller_partitions_on_dead_stores',
    help: 'Partitions of ACTIVE tables whose segment store is dead (their calls fail until it returns).',
    collect() {
      let n = 0;
      for (const scope of meta.listScopes()) {
        for (const t of meta.tablesInScope(scope)) if (t.state === 'ACTIVE') n += t.partitions.filter((p) => !stores.isLive((p.replaces ?? p).storeId)).length;
      }
      this.set(n);
    },
  });
}
