/**
 * Where a document and its changes feed entries live. A key family routes to one partition by the
 * MurmurHash3 of its name, so a document family `d/<id>` lands wherever its id hashes; its feed
 * entries go to the feed family of that same partition, so that the document's versions and the feed's
 * keys are sequences of one segment and compare. Feed family names `c/<k>` are picked by trying
 * k = 0, 1, 2, … and keeping, for each partition, the first name that lands there — a pure function of
 * the partition count, so every store on the table agrees on it.
 */
import { InvalidArgumentError } from '../errors';
import { MAX_PARTITION_COUNT, MIN_PARTITION_COUNT } from '../limits';
import { partitionOf } from '../table-description';
import { documentFamily, FEED_FAMILY_PREFIX } from './key-layout';

/** The names tried before giving up (coupon collector: ~7,400 expected for 1,024 partitions). */
const MAX_NAME_TRIES = 1_000_000;

/** Layouts computed so far, by partition count (a pure function; 1,024 partitions take ~0.1 s). */
const computed = new Map<number, readonly string[]>();

/** The feed family of each partition, in partition order. */
export function feedFamilies(partitionCount: number): readonly string[] {
  let names = computed.get(partitionCount);
  if (names === undefined) computed.set(partitionCount, (names = search(partitionCount)));
  return names;
}

function search(partitionCount: number): readonly string[] {
  const names: (string | undefined)[] = new Array(partitionCount).fill(undefined);
  let missing = partitionCount;
  for (let k = 0; missing > 0 && k < MAX_NAME_TRIES; k++) {
    const name = `${FEED_FAMILY_PREFIX}${k}`;
    const p = partitionOf(partitionCount, name);
    if (names[p] === undefined) {
      names[p] = name;
      missing--;
    }
  }
  if (missing > 0) throw new Error(`no feed family name found for ${missing} of ${partitionCount} partitions`);
  return names as string[];
}

/** The partitions of a table and the feed family of each. */
export class FeedLayout {
  /** The feed family of each partition. */
  readonly families: readonly string[];

  constructor(readonly partitionCount: number) {
    if (!Number.isInteger(partitionCount) || partitionCount < MIN_PARTITION_COUNT || partitionCount > MAX_PARTITION_COUNT) {
      throw new InvalidArgumentError(`partitionCount is ${String(partitionCount)}; it must be an integer from ${MIN_PARTITION_COUNT} to ${MAX_PARTITION_COUNT}`);
    }
    this.families = feedFamilies(partitionCount);
  }

  /** The partition of document `id`. */
  partitionOf(id: string): number {
    return partitionOf(this.partitionCount, documentFamily(id));
  }

  /** The feed family of document `id`'s partition. */
  feedOf(id: string): string {
    return this.families[this.partitionOf(id)];
  }
}
