/**
 * What {@link KeyValueTableManager.describeKeyValueTable} reports, as `kafka-topics --describe` or
 * `nodetool describering` would: a table's state and, per partition, the routing hash range it covers,
 * its table segment and the store that owns it, and on request what the segment holds; and
 * {@link partitionOf}, the routing function itself (DESIGN §2), to find the partition of a key.
 */
import type { Partition, SegmentInfo, TableDescription } from '../proto/messages';
import { ServiceError } from './errors';
import { callUnary, Connections } from './internal/connections';
import { partitionIndex, routingPoint } from './internal/hashing';
import { toKvtError } from './internal/status-to-error';
import { checkFamily, checkKey, checkPartitionCount, refuse } from './internal/validation';

/** A table's lifecycle state: CREATING until every partition's segment exists, DELETING until every one is gone. */
export type KeyValueTableState = 'CREATING' | 'ACTIVE' | 'DELETING';

/** What a partition's segment holds, or why its store could not say (`code` as in KvtError, e.g. UNAVAILABLE). */
export type SegmentContents = { entries: number; bytes: number } | { code: string; error: string };

/** One partition of a table. */
export interface PartitionDescription {
  partition: number;
  /** It holds the keys whose routing point lies in [hashLow, hashHigh). */
  hashLow: number;
  hashHigh: number;
  /** Its table segment's id (unique within its store). */
  segment: string;
  /** The segment store that owns the segment; `live` as the controller judges it now. */
  store: { id: string; address: string; live: boolean };
  /** Only with `{ contents: true }`: live entries and their key + value bytes, read from the store. */
  contents?: SegmentContents;
}

/** A table with the placement of every partition, in any state. */
export interface KeyValueTableDescription {
  scope: string;
  name: string;
  state: KeyValueTableState;
  partitionCount: number;
  createdAt: Date;
  partitions: PartitionDescription[];
}

/**
 * The partition (0 … partitionCount − 1) holding `family`'s keys, or without a family the one holding
 * the serialized key `key`: MurmurHash3 of the family's UTF-8 bytes (else of the key) mapped to [0, 1).
 * @throws InvalidArgumentError for a partition count outside 1–1024, a bad family, or no key without a family
 */
export function partitionOf(partitionCount: number, family: string | null, key?: Uint8Array): number {
  const count = checkPartitionCount({ partitionCount });
  checkFamily(family);
  if (family !== null && family !== undefined) return partitionIndex(routingPoint(family, NO_KEY), count);
  if (!(key instanceof Uint8Array)) refuse('key', key, 'the serialized key (a Uint8Array) when there is no key family');
  checkKey(key, 0);
  return partitionIndex(routingPoint(null, key), count);
}

const NO_KEY = new Uint8Array(0);

/** The public shape of the controller's answer. */
export function fromWire(d: TableDescription): KeyValueTableDescription {
  // The controller always sets `table`; the type says null because a message field may be absent.
  const table = d.table;
  if (!table) throw new ServiceError('the controller described a table without its TableInfo', { code: 'SERVICE_ERROR' });
  return {
    scope: table.scope,
    name: table.table,
    state: table.state as KeyValueTableState,
    partitionCount: table.config?.partitionCount ?? d.partitions.length,
    createdAt: new Date(Number(table.createdAtMs)),
    partitions: d.partitions.map((p: Partition) => ({
      partition: p.index,
      hashLow: p.hashLow,
      hashHigh: p.hashHigh,
      segment: p.segmentId,
      store: { id: p.storeId, address: p.storeAddress, live: p.storeLive },
    })),
  };
}

/**
 * Fills in `contents` of every partition: one GetSegmentInfo per partition (the store counts the
 * segment's live entries by reading them), one store at a time per address, all stores at once. A store
 * that does not answer by `deadline` leaves its partitions with the error instead.
 */
export async function addContents(description: KeyValueTableDescription, connections: Connections, deadline: number): Promise<void> {
  const byStore = new Map<string, PartitionDescription[]>();
  for (const p of description.partitions) {
    const partitions = byStore.get(p.store.address);
    if (partitions) partitions.push(p);
    else byStore.set(p.store.address, [p]);
  }
  await Promise.all(
    [...byStore].map(async ([address, partitions]) => {
      for (const p of partitions) {
        try {
          const info = await callUnary<object, SegmentInfo>(connections.store(address), 'GetSegmentInfo', { segmentId: p.segment }, deadline);
          p.contents = { entries: Number(info.entryCount), bytes: Number(info.bytes) };
        } catch (err) {
          const e = toKvtError(err, { segment: p.segment });
          p.contents = { code: e.code, error: e.message };
        }
      }
    }),
  );
}
