/**
 * What `kvt store list`, `kvt store remove` and `kvt table describe` print: the segment stores, and a
 * table's partitions, as aligned columns under a header; a removal's report one line per table, each
 * starting with what happened to it.
 */
import type { KeyValueTableDescription, KeyValueTableInfo, PartitionDescription, ReplacedPartition, SegmentStoreDescription, SegmentStoreRemoval } from '../client';

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
  return columns([HEADER, ...stores.map((s) => [s.id, s.address, s.live ? 'live' : 'dead', formatAge(s.lastHeartbeatAgeMs), String(s.segmentCount)])]);
}

/** Rows of cells as lines, each column as wide as its widest cell and two spaces apart (the last cell unpadded). */
function columns(rows: readonly string[][]): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  '));
}

/** A hash bound with at most six significant digits: 0, 0.125, 0.333333, 1. */
const bound = (x: number): string => String(Number(x.toPrecision(6)));

/** The columns a partition adds when its contents were asked for: entries and bytes, or "?" and why not. */
function contentCells(p: PartitionDescription): string[] {
  const c = p.contents;
  if (c === undefined) return [];
  return 'error' in c ? ['?', '?', c.code] : [String(c.entries), String(c.bytes), ''];
}

/**
 * The lines of `kvt table describe`: "scope/table: STATE, N partitions, created <ISO time>", then a
 * header and one partition a line (`partitions` may be a subset of the table's, e.g. one family's).
 */
export function formatTableDescription(d: KeyValueTableDescription, partitions: readonly PartitionDescription[], withContents: boolean): string[] {
  const header = ['PARTITION', 'HASH RANGE', 'SEGMENT', 'STORE', 'ADDRESS', 'STATE', ...(withContents ? ['ENTRIES', 'BYTES', 'ERROR'] : [])];
  const rows = partitions.map((p) => [String(p.partition), `[${bound(p.hashLow)}, ${bound(p.hashHigh)})`, p.segment, p.store.id, p.store.address, p.store.live ? 'live' : 'dead', ...contentCells(p)]);
  const title = `${d.scope}/${d.name}: ${d.state}, ${d.partitionCount} partition${d.partitionCount === 1 ? '' : 's'}, created ${d.createdAt.toISOString()}`;
  return [title, ...columns([header, ...rows]).map((line) => line.trimEnd())];
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
