/**
 * The time of a change, in microseconds: the store's clock (ms) × 1000 plus a count of the changes
 * this process timed within that millisecond, so that the changes one process makes in one
 * millisecond keep their order when the feed merges partitions by time. Never goes back.
 */
export class ChangeClock {
  private last = 0;

  constructor(private readonly clock: () => number) {}

  /** A time after every one this clock gave. */
  now(): number {
    const t = Math.max(0, Math.floor(this.clock())) * 1000;
    this.last = t > this.last ? t : this.last + 1;
    return this.last;
  }
}
