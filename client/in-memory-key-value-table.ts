/**
 * A {@link KeyValueTable} held in this process, for unit tests of apps and of the layers built on
 * tables (as `memory-level` stands beside `classic-level`): no server, no LevelDB, the same
 * semantics as the gRPC table. It checks input with the same code (AbstractKeyValueTable), so it
 * refuses the same calls with the same errors; it routes keys to partitions with the same hash, and
 * each partition is a segment with its own id and sequence, so versions behave as on a cluster (a
 * version of another partition, or of another table, never matches); conditional failures carry
 * the segment store's codes and messages; iterators page by the same rules (exact page sizes, the
 * 2 MiB cap, resume tokens); expiry follows an injectable clock.
 *
 * Not durable and not shared: the data lives as long as the table object, and only this handle sees it.
 */
import { MAX_ITERATOR_PAGE_BYTES } from '../proto/limits';
import { InvalidArgumentError } from './errors';
import { AbstractKeyValueTable, KeysRead } from './internal/abstract-key-value-table';
import { partitionIndex, routingPoint } from './internal/hashing';
import { IteratorState, pageWithState } from './internal/iterator-state';
import type { MemoryEntry } from './internal/memory-entries';
import { MemoryBatch, MemorySegment, ScanPosition } from './internal/memory-segment';
import { toKvtError } from './internal/status-to-error';
import { checkPartitionCount } from './internal/validation';
import type { KeyValueTableConfig } from './key-value-table-factory';
import type { IteratorItem, ScannedEntry, TableEntry, TableKey } from './types';
import { Version } from './version';

const EMPTY = Buffer.alloc(0);

/** Options of {@link InMemoryKeyValueTable}. */
export interface InMemoryKeyValueTableOptions<K, V> extends KeyValueTableConfig<K, V> {
  /** Partitions (1–1024); keys are spread over them as on a cluster. @default 4 */
  partitionCount?: number;
  /**
   * Milliseconds since the epoch, for entry expiry (`ttlMs`). Like the segment store's clock it
   * never goes back: while it reads earlier than a time it gave, time stands still. @default Date.now
   */
  clock?: () => number;
  /** The table's name, as errors and iterator states carry it. @default 'memory/table' */
  name?: string;
}

/** Segment ids are unique in the process, so that a version of one table never matches in another. */
let nextSegmentId = 1;

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Checks the options; resolves the defaults. */
function checkOptions<K, V>(options: InMemoryKeyValueTableOptions<K, V>): Required<InMemoryKeyValueTableOptions<K, V>> {
  if (!options?.keySerializer || !options?.valueSerializer) throw new InvalidArgumentError('InMemoryKeyValueTable needs keySerializer and valueSerializer');
  const partitionCount = options.partitionCount === undefined ? 4 : checkPartitionCount(options);
  const clock = options.clock ?? Date.now;
  if (typeof clock !== 'function') throw new InvalidArgumentError(`clock must be a function returning milliseconds, got ${typeof clock}`);
  const name = options.name ?? 'memory/table';
  if (typeof name !== 'string' || name.length === 0) throw new InvalidArgumentError('name must be a non-empty string');
  return { keySerializer: options.keySerializer, valueSerializer: options.valueSerializer, partitionCount, clock, name };
}

/** A key-value table in memory; see the module comment. */
export class InMemoryKeyValueTable<K, V> extends AbstractKeyValueTable<K, V, MemoryBatch> {
  /** The number of partitions (one segment each). */
  readonly partitionCount: number;
  private readonly segments: MemorySegment[];
  private readonly clock: () => number;
  private highest = 0;

  /**
   * An empty table.
   * @throws InvalidArgumentError when a serializer is missing, or the partition count, clock or name is invalid.
   */
  constructor(options: InMemoryKeyValueTableOptions<K, V>) {
    const checked = checkOptions(options);
    super(checked.name, checked.keySerializer, checked.valueSerializer);
    this.partitionCount = checked.partitionCount;
    this.clock = checked.clock;
    this.segments = Array.from({ length: this.partitionCount }, () => new MemorySegment(String(nextSegmentId++)));
  }

  protected newBatch(): MemoryBatch {
    return new MemoryBatch();
  }

  protected async writeBatch(family: string | null, routeKey: Uint8Array, batch: MemoryBatch, keys: readonly unknown[]): Promise<(Version | null)[]> {
    const segment = this.segmentOf(family, routeKey);
    const now = this.now();
    const failure = segment.check(family ?? '', batch.mods, now);
    if (failure) throw toKvtError(failure, { table: this.name, segment: segment.id, keyAt: (i) => keys[i] });
    const sequences = segment.apply(family ?? '', batch.mods, now);
    return sequences.map((s) => (s > 0 ? Version.of(segment.id, String(s)) : null));
  }

  protected async readEntries(read: KeysRead<K, V>): Promise<void> {
    const now = this.now();
    const family = read.family ?? '';
    read.bytes.forEach((bytes, i) => {
      const segment = this.segmentOf(read.family, bytes);
      const e = segment.get(family, toBuffer(bytes), now);
      read.out[i] = e ? { key: read.list[i], value: this.valueFrom(e), version: Version.of(segment.id, String(e.sequence)) } : null;
    });
  }

  protected keyPages(state: IteratorState): AsyncIterable<IteratorItem<TableKey<K>>> {
    return this.pagesOf(state, (e, segmentId) => ({ key: this.keyFrom(e), version: Version.of(segmentId, String(e.sequence)) }));
  }

  protected entryPages(state: IteratorState): AsyncIterable<IteratorItem<TableEntry<K, V>>> {
    return this.pagesOf(state, (e, segmentId) => ({ key: this.keyFrom(e), value: this.valueFrom(e), version: Version.of(segmentId, String(e.sequence)) }));
  }

  /** Pages from `state` on, each continuing strictly after the last key of the one before. */
  private async *pagesOf<T>(state: IteratorState, itemOf: (e: MemoryEntry, segmentId: string) => T): AsyncGenerator<IteratorItem<T>> {
    const segment = this.segmentOf(state.family, EMPTY);
    const bytesOf = state.entries ? (e: MemoryEntry) => e.key.length + e.value.length : (e: MemoryEntry) => e.key.length;
    while (!state.done) {
      const page = segment.page(state.family, state, state.maxKeysAtOnce, this.now(), bytesOf);
      if (page.entries.length === 0) return;
      state.after = Buffer.from(page.entries[page.entries.length - 1].key);
      state.done = page.done;
      yield pageWithState(
        page.entries.map((e) => itemOf(e, segment.id)),
        state,
      );
    }
  }

  protected async *scanPages(maxItems: number): AsyncGenerator<IteratorItem<ScannedEntry<K, V>>> {
    for (let partition = 0; partition < this.segments.length; partition++) {
      const segment = this.segments[partition];
      let after: ScanPosition | undefined;
      for (;;) {
        this.checkOpen();
        const page = segment.scanPage(after, maxItems, this.now(), MAX_ITERATOR_PAGE_BYTES);
        if (page.items.length === 0) break;
        const last = page.items[page.items.length - 1];
        after = { family: last.family, key: last.entry.key };
        const items = page.items.map(({ family, entry }) => ({
          family: family === '' ? null : family,
          key: this.keyFrom(entry),
          value: this.valueFrom(entry),
          version: Version.of(segment.id, String(entry.sequence)),
        }));
        yield { items, state: `${partition}:${scanPosition(after)}` };
        if (page.done) break;
      }
    }
  }

  protected release(): void {
    // Nothing to release: the entries go with the table object.
  }

  /** The segment of a family, or of a family-less key by its serialized bytes. */
  private segmentOf(family: string | null, key: Uint8Array): MemorySegment {
    return this.segments[partitionIndex(routingPoint(family, key), this.segments.length)];
  }

  /** The clock's time, never earlier than a time given before. */
  private now(): number {
    const t = this.clock();
    if (t > this.highest) this.highest = t;
    return this.highest;
  }

  // Deserializers get copies: a view of the stored bytes (Serializers.bytesView) must not let a
  // caller change the table.
  private keyFrom(e: MemoryEntry): K {
    return this.keySerializer.deserialize(Buffer.from(e.key));
  }

  private valueFrom(e: MemoryEntry): V {
    return this.valueSerializer.deserialize(Buffer.from(e.value));
  }
}

/** The position of a scan page, as a segment store lays it out: 'F' + family length + family + key, or 'N' + key. */
function scanPosition(p: ScanPosition): string {
  const family = Buffer.from(p.family, 'utf8');
  const head = p.family === '' ? Buffer.from('N') : Buffer.concat([Buffer.from('F'), Buffer.from([family.length >> 8, family.length & 0xff]), family]);
  return Buffer.concat([head, p.key]).toString('base64url');
}
