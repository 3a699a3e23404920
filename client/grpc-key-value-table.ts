/**
 * The gRPC implementation of {@link KeyValueTable}: keys are routed by the MurmurHash3 of their
 * family (or of the key without one) to a partition's table segment, on the segment store that owns
 * it. Input is checked before anything is sent (AbstractKeyValueTable); the store checks it again.
 *
 * Retries: reads are retried on UNAVAILABLE within the deadline; updates (unconditional ones too)
 * only when the request surely did not reach the store — otherwise `UnavailableError.maybeApplied` is
 * true and the caller should read back. (Sent again, an update could be applied twice, over another
 * client's write made in between.)
 */
import { MAX_GET_KEYS } from '../proto/limits';
import type { Entry } from '../proto/messages';
import { ServiceError, TableNotFoundError } from './errors';
import { AbstractKeyValueTable, KeysRead } from './internal/abstract-key-value-table';
import { routingPoint, partitionIndex } from './internal/hashing';
import type { IteratorState } from './internal/iterator-state';
import type { Route, RoutingTable } from './internal/routing';
import { getKeyBytes } from './internal/wire-codec';
import { iteratePages } from './internal/table-iterator';
import type { ClientSubResponse as SubResponse, PageItemBuilder } from './internal/wire-decoder';
import { StaleGrouping, TableTransport } from './internal/table-transport';
import { UpdateEncoder } from './internal/update-encoder';
import { versionsOf } from './internal/update-versions';
import { rangeDeserializer, Serializer } from './serializers';
import type { IteratorItem, ScannedEntry, TableEntry, TableKey } from './types';
import { Version } from './version';

const EMPTY = Buffer.alloc(0);

/** A table of keys K and values V on a kvt cluster; obtain one from `KeyValueTableFactory.forKeyValueTable`. */
export class GrpcKeyValueTable<K, V> extends AbstractKeyValueTable<K, V, UpdateEncoder> {
  /** @internal Created by KeyValueTableFactory. */
  constructor(
    /** `scope/table`. */
    name: string,
    private readonly transport: TableTransport,
    keySerializer: Serializer<K>,
    valueSerializer: Serializer<V>,
    private readonly onClose: () => void = () => undefined,
  ) {
    super(name, keySerializer, valueSerializer);
  }

  protected newBatch(family: string, capacity: number): UpdateEncoder {
    return new UpdateEncoder(family, capacity);
  }

  /** Sends a batch to the segment of its family (or of its one key); resolves the version of each modification. */
  protected writeBatch(family: string | null, routeKey: Uint8Array, batch: UpdateEncoder, keys: readonly unknown[]): Promise<(Version | null)[]> {
    const point = routingPoint(family, routeKey);
    const modifications = batch.finish();
    return this.transport
      .execute(
        (t) => t.routeOf(point),
        (segment) => ({ update: { segmentId: segment, modifications } }),
        { keyAt: (i) => keys[i] },
      )
      .then(({ response, segmentId }) => versionsOf(response.update ?? undefined, modifications.types, segmentId));
  }

  protected readEntries(read: KeysRead<K, V>): Promise<void> {
    return this.readKeys(
      read,
      read.list.map((_, i) => i),
    );
  }

  /** A `get`: the one key's Get goes straight to its partition (no grouping, no slicing, no Promise.all). */
  protected override readEntry(read: KeysRead<K, V>): Promise<TableEntry<K, V> | null> {
    const key = read.list[0];
    const refs = [{ family: read.family ?? '', key: read.bytes[0] }];
    const point = routingPoint(read.family, read.bytes[0]);
    return this.transport
      .execute(
        (t) => t.routeOf(point),
        (segment) => ({ get: { segmentId: segment, keys: refs } }),
        { read: true, keyAt: () => key },
      )
      .then((answer) => this.entriesOf(read.list, [0], refs.length, answer)[0]);
  }

  /**
   * The entries of the keys `list[i]`, i in `at`, from the store's answer to a Get of `count` keys;
   * null for a key not found.
   */
  private entriesOf(list: readonly K[], at: readonly number[], count: number, answer: { response: SubResponse; segmentId: string }): (TableEntry<K, V> | null)[] {
    const entries = answer.response.get?.entries ?? [];
    if (entries.length !== count) throw new ServiceError(`the store answered ${entries.length} entries for ${count} keys`, { code: 'SERVICE_ERROR' });
    return at.map((i, j) => (entries[j]?.found ? this.entryOf(list[i], entries[j], answer.segmentId) : null));
  }

  /**
   * Reads the keys of `read` at `indexes` into `read.out`. Family-less keys are grouped by partition
   * with the routing at hand; should a retry find the table with another partition count (deleted and
   * created again), the group is regrouped with that routing rather than sent whole to one partition.
   */
  private async readKeys(read: KeysRead<K, V>, indexes: number[]): Promise<void> {
    const { family, bytes } = read;
    let groups = [indexes];
    let partitionCount: number | undefined;
    if (family === null && indexes.length > 1) {
      const routing = await this.transport.routingTable();
      partitionCount = routing.partitionCount;
      groups = groupByPartition(indexes, (i) => partitionIndex(routingPoint(null, bytes[i]), routing.partitionCount));
    }
    const fam = family ?? '';
    const keyBytes = (i: number) => getKeyBytes(read.familyLength, bytes[i].length);
    await Promise.all(
      groups.flatMap((group) =>
        slices(group, MAX_GET_KEYS, GET_REQUEST_BYTES, keyBytes).map(async (slice) => {
          const point = routingPoint(family, bytes[slice[0]]);
          const refs = slice.map((i) => ({ family: fam, key: bytes[i] }));
          let answer: { response: SubResponse; segmentId: string };
          try {
            answer = await this.transport.execute(
              (t) => {
                if (partitionCount !== undefined && t.partitionCount !== partitionCount) throw new StaleGrouping(t.partitionCount);
                return t.routeOf(point);
              },
              (segment) => ({ get: { segmentId: segment, keys: refs } }),
              { read: true, keyAt: (i) => read.list[slice[i]] },
            );
          } catch (err) {
            if (err instanceof StaleGrouping) return this.readKeys(read, slice);
            throw err;
          }
          this.entriesOf(read.list, slice, refs.length, answer).forEach((entry, j) => (read.out[slice[j]] = entry));
        }),
      ),
    );
  }

  protected keyPages(state: IteratorState): AsyncIterable<IteratorItem<TableKey<K>>> {
    const key = rangeDeserializer(this.keySerializer);
    return this.pagesOf(state, (segmentId) => (b, ks, ke, _vs, _ve, sequence) => ({ key: key(b, ks, ke), version: Version.of(segmentId, sequence) }));
  }

  protected entryPages(state: IteratorState): AsyncIterable<IteratorItem<TableEntry<K, V>>> {
    const key = rangeDeserializer(this.keySerializer);
    const value = rangeDeserializer(this.valueSerializer);
    return this.pagesOf(state, (segmentId) => (b, ks, ke, vs, ve, sequence) => ({
      key: key(b, ks, ke),
      value: value(b, vs, ve),
      version: Version.of(segmentId, sequence),
    }));
  }

  private pagesOf<T>(state: IteratorState, builder: (segmentId: string) => PageItemBuilder<T>): AsyncIterable<IteratorItem<T>> {
    const point = routingPoint(state.family, EMPTY);
    return iteratePages(this.transport, (t) => t.routeOf(point), state, builder);
  }

  /**
   * The partitions are those the controller has when the scan starts; a partition whose segment
   * changes under the scan (the table deleted, or created again) ends it with TableNotFoundError.
   */
  protected async *scanPages(maxItems: number): AsyncGenerator<IteratorItem<ScannedEntry<K, V>>> {
    // The partitions as the controller has them now (a cached routing may be of a table since deleted).
    const routing = await this.transport.routingTable(true);
    for (const start of routing.allRoutes()) {
      const partition = start.partition;
      const pick = (t: RoutingTable): Route => {
        const route = t.allRoutes()[partition];
        if (t.partitionCount === routing.partitionCount && route.segmentId === start.segmentId) return route;
        throw new TableNotFoundError(
          `table ${this.name} changed during the scan: partition ${partition} of ${routing.partitionCount} was segment ${start.segmentId}, and the table now has ${t.partitionCount} partitions (deleted and created again, or a store removed); scan again`,
          { table: this.name },
        );
      };
      let after: Uint8Array = EMPTY;
      for (;;) {
        this.checkOpen();
        const { response, route } = await this.transport.read('Scan', pick, (segmentId) => ({ segmentId, includeValues: true, maxItems, after }));
        const items = response.items.map((e) => ({
          family: e.family === '' ? null : e.family,
          key: this.keySerializer.deserialize(e.key),
          value: this.valueSerializer.deserialize(e.value),
          version: Version.of(route.segmentId, e.sequence),
        }));
        after = response.position;
        if (items.length > 0) yield { items, state: `${partition}:${Buffer.from(after).toString('base64url')}` };
        if (response.done || response.items.length === 0) break;
      }
    }
  }

  protected release(): void {
    this.transport.close();
    this.onClose();
  }

  private entryOf(key: K, e: Entry, segmentId: string): TableEntry<K, V> {
    return { key, value: this.valueSerializer.deserialize(e.value), version: Version.of(segmentId, e.sequence) };
  }
}

/** Encoded bytes of the keys of one Get sub-request at most (a store answers at most 32 MiB of entries). */
const GET_REQUEST_BYTES = 4 * 1024 * 1024;

/** `indexes` grouped by `partitionOf`, each group in input order. */
function groupByPartition(indexes: number[], partitionOf: (i: number) => number): number[][] {
  const groups = new Map<number, number[]>();
  for (const i of indexes) {
    const p = partitionOf(i);
    const g = groups.get(p);
    if (g) g.push(i);
    else groups.set(p, [i]);
  }
  return [...groups.values()];
}

/** `items` cut into runs of at most `maxCount` items and `maxBytes` (by `bytesOf`; a larger item goes alone). */
function slices(items: number[], maxCount: number, maxBytes: number, bytesOf: (item: number) => number): number[][] {
  const out: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  for (const item of items) {
    const b = bytesOf(item);
    if (current.length > 0 && (current.length >= maxCount || bytes + b > maxBytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += b;
  }
  if (current.length > 0) out.push(current);
  return out;
}
