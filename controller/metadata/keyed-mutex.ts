/**
 * Serializes async work per key: work for one key runs one at a time in arrival order, work for
 * different keys runs concurrently. Used for per-table locks and for the metadata write queue.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` once every earlier work for `key` has settled; resolves or rejects as `work` does. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    // The tail never rejects, so one failed operation does not poison the next.
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** True while some work for `key` is queued or running. */
  isHeld(key: string): boolean {
    return this.tails.has(key);
  }

  /** Resolves once everything queued so far (for every key) has settled. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }
}
