/**
 * Group commit of small operations on one key family: while one call for the family is in flight,
 * the items submitted meanwhile queue up and go together in the next call. An idle family sends an
 * item at once, so this adds no wait; a busy one (concurrent edits of documents of one partition
 * sharing its feed family) turns many sub-requests into one.
 */
export class GroupCommitter<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private busy = false;

  /** `run` sends a group; it resolves one result per item, in order. */
  constructor(private readonly run: (items: T[]) => Promise<R[]>) {}

  /** Sends `item` with the next group; resolves its result. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.busy) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.busy = true;
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      try {
        const results = await this.run(group.map((g) => g.item));
        group.forEach((g, i) => g.resolve(results[i]));
      } catch (err) {
        for (const g of group) g.reject(err);
      }
    }
    this.busy = false;
  }
}
