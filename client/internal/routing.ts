/**
 * Routing of one table: which segment (and store) owns which hash range, as the controller's
 * GetRouting reports it. Cached per table and refreshed when a store says it does not own a segment
 * or cannot be reached (the store may have come back on a new address). Concurrent refreshes share
 * one controller call.
 */
import type { Partition, Routing } from '../../proto/messages';
import { partitionIndex } from './hashing';

/** Where one key goes. */
export interface Route {
  segmentId: string;
  address: string;
  partition: number;
  generation: string;
}

/** A table's routing as the client uses it. */
export class RoutingTable {
  private readonly partitions: Partition[];

  constructor(readonly routing: Routing) {
    this.partitions = [...routing.partitions].sort((a, b) => a.index - b.index);
  }

  get generation(): string {
    return this.routing.generation;
  }

  get partitionCount(): number {
    return this.partitions.length;
  }

  /** The route of routing point `x` in [0, 1): the partition whose [hashLow, hashHigh) contains it. */
  routeOf(x: number): Route {
    const n = this.partitions.length;
    let i = partitionIndex(x, n);
    let p = this.partitions[i];
    // Ranges are [i/n, (i+1)/n) by contract; search only if the controller ever reports otherwise.
    if (!(p.hashLow <= x && x < p.hashHigh) && !(i === n - 1 && x >= p.hashLow)) {
      i = this.partitions.findIndex((q) => q.hashLow <= x && x < q.hashHigh);
      p = this.partitions[i < 0 ? n - 1 : i];
    }
    return { segmentId: p.segmentId, address: p.storeAddress, partition: p.index, generation: this.routing.generation };
  }

  /** Every partition's route, in partition order. */
  allRoutes(): Route[] {
    return this.partitions.map((p) => ({ segmentId: p.segmentId, address: p.storeAddress, partition: p.index, generation: this.routing.generation }));
  }
}

/** The cached routing of one table, fetched through `fetch` (the controller's GetRouting). */
export class RoutingCache {
  private current: RoutingTable | undefined;
  private pending: Promise<RoutingTable> | undefined;

  constructor(private readonly fetch: () => Promise<Routing>) {}

  /** The cached routing, fetching it on first use. */
  get(): RoutingTable | Promise<RoutingTable> {
    return this.current ?? this.load();
  }

  /**
   * Fetches fresh routing unless it already changed since `staleGeneration` (another caller refreshed
   * it meanwhile). A fetch already under way is shared, but it began before this call: if it answers
   * `staleGeneration` (or, without one, in any case) the routing is fetched once more, so the caller
   * gets what the controller held after it saw its route go stale.
   */
  refresh(staleGeneration?: string): Promise<RoutingTable> {
    if (this.current && staleGeneration !== undefined && this.current.generation !== staleGeneration) return Promise.resolve(this.current);
    const joined = this.pending !== undefined;
    const fetched = this.load();
    if (!joined) return fetched;
    return fetched.then((table) => (staleGeneration === undefined || table.generation === staleGeneration ? this.load() : table));
  }

  /** Forgets the cached routing (e.g. the table was deleted). */
  invalidate(): void {
    this.current = undefined;
  }

  private load(): Promise<RoutingTable> {
    this.pending ??= this.fetch().then(
      (routing) => {
        this.pending = undefined;
        this.current = new RoutingTable(routing);
        return this.current;
      },
      (err: unknown) => {
        this.pending = undefined;
        throw err;
      },
    );
    return this.pending;
  }
}
