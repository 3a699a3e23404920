/**
 * What `kvt store list` and `kvt store remove` print: the segment stores as aligned columns under a
 * header, and a removal's report one line per table, each starting with what happened to it.
 */
import type { KeyValueTableInfo, ReplacedPartition, SegmentStoreDescription, SegmentStoreRemoval } from '../client';

const HEADER = ['ID', 'ADDRESS', 'STATE', 'LAST HEARTBEAT', 'SEGMENTS'];

/** "0.4 s ago", "12 min 5 s ago", "3 h 2 min ago". */
export function formatAge(ms: number): string {
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)} s ago`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s ago`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min ago`;
}

/** The lines of `kvt store list`: a header, then one store a line, columns aligned. */
export function formatStoreList(stores: readonly SegmentStoreDescription[]): string[] {
  const rows = [HEADER, ...stores.map((s) => [s.id, s.address, s.live ? 'live' : 'dead', formatAge(s.lastHeartbeatAgeMs), String(s.segmentCount)])];
  const widths = HEADER.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  '));
}

/** "s/t partitions 1, 3" per table, in the order the partitions come. */
function byTable(partitions: readonly ReplacedPartition[]): string[] {
  const tables = new Map<string, number[]>();
  for (const p of partitions) {
    const key = `${p.scope}/${p.name}`;
    tables.set(key, [...(tables.get(key) ?? []), p.partition]);
  }
  return [...tables].map(([table, indexes]) => `${table} partition${indexes.length > 1 ? 's' : ''} ${indexes.join(', ')}`);
}

const names = (tables: readonly KeyValueTableInfo[]) => tables.map((t) => `${t.scope}/${t.name}`);

/** The lines of `kvt store remove`: what was removed, then what happened to each table it touched. */
export function formatRemoval(r: SegmentStoreRemoval): string[] {
  return [
    `${r.removed ? 'removed' : 'removed before:'} ${r.id} (last at ${r.address})`,
    ...byTable(r.lostPartitions).map((t) => `lost data: ${t} (their data stayed on the removed store; they start again empty)`),
    ...byTable(r.placedPartitions).map((t) => `placed: ${t} (held no data yet; now on a live store)`),
    ...names(r.deletingTables).map((t) => `deleted: ${t} (was being deleted; its segments on the removed store count as deleted)`),
    ...names(r.unfinishedTables).map((t) => `unfinished: ${t} (a store it needs is unreachable; the controller completes it by itself)`),
  ];
}
