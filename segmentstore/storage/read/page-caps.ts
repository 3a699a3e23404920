/**
 * The caps every answer of a read is cut by: items and key + value bytes of an iterator or scan page,
 * and the bytes of the Gets of one answer (which an ExecuteStream's answers not yet sent share).
 */
import { MAX_GET_ANSWER_BYTES } from '../../../proto/limits';

/**
 * Bytes that several answers draw on together: an `ExecuteStream`'s answers not yet sent (see
 * execute-stream.ts). `used` may pass `limit` by the first item of each answer, which is always taken.
 */
export class BytePool {
  used = 0;

  constructor(readonly limit: number) {}
}

/**
 * The caps of every iterator and scan page, and of the Gets of one answer: at most `maxItems` items,
 * and their key + value bytes within `pageBytes` (and within what `pool` has left, if given), except
 * that a page always takes its first item.
 */
export class PageCaps {
  private count = 0;
  private bytes = 0;

  constructor(
    private readonly maxItems: number,
    private readonly pageBytes: number,
    private readonly pool?: BytePool,
  ) {}

  /** Key + value bytes taken from the pool (0 without one). */
  get drawn(): number {
    return this.pool ? this.bytes : 0;
  }

  /** Counts in an item of `size` key + value bytes; false when it does not fit (the page is complete). */
  admit(size: number): boolean {
    if (this.count >= this.maxItems) return false;
    if (this.count > 0 && (this.bytes + size > this.pageBytes || (this.pool !== undefined && this.pool.used + size > this.pool.limit))) return false;
    this.bytes += size;
    this.count++;
    if (this.pool) this.pool.used += size;
    return true;
  }
}

/**
 * The caps of the Gets of one answer (see GetResponse in segmentstore.proto): any number of entries
 * within MAX_GET_ANSWER_BYTES of keys and values (and within what `pool` has left: an ExecuteStream's
 * answers share one), the first always (so every answer makes progress). An entry refused ends its
 * Get's answer at the keys before it.
 */
export function getAnswerCaps(pool?: BytePool): PageCaps {
  return new PageCaps(Infinity, MAX_GET_ANSWER_BYTES, pool);
}
