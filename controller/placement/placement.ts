/**
 * Placement of a new table's partitions on segment stores: each partition goes to the live store that
 * owns the fewest segments so far (counting the ones this table already placed), ties broken by store
 * id so the same inputs always give the same placement. Partitions are never moved afterwards: a dead
 * store's data lives on its disk (DESIGN §6).
 */

/**
 * Chooses the owning store of each of `partitionCount` partitions.
 * @param liveStoreIds the stores that may receive segments (at least one)
 * @param currentLoad segments each store owns already (missing = 0)
 * @returns `owners[i]` is the store id of partition i
 * @throws Error when `liveStoreIds` is empty
 */
export function placePartitions(partitionCount: number, liveStoreIds: readonly string[], currentLoad: ReadonlyMap<string, number> = new Map()): string[] {
  if (liveStoreIds.length === 0) throw new Error('cannot place partitions: no live segment store');
  const load = new Map<string, number>();
  for (const id of new Set(liveStoreIds)) load.set(id, currentLoad.get(id) ?? 0);
  const owners: string[] = [];
  for (let i = 0; i < partitionCount; i++) {
    const target = leastLoaded(load);
    owners.push(target);
    load.set(target, load.get(target)! + 1);
  }
  return owners;
}

/** The store with the smallest load; the smallest id among equals. */
function leastLoaded(load: ReadonlyMap<string, number>): string {
  let best: string | undefined;
  let bestLoad = Infinity;
  for (const [id, n] of load) {
    if (n < bestLoad || (n === bestLoad && best !== undefined && id < best)) {
      best = id;
      bestLoad = n;
    }
  }
  return best!;
}
