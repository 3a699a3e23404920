/**
 * Where the entries of a keyed family's iterator page go, as ranges of the chunk records they were
 * read from: into {@link Page} objects here (what `SegmentEngine.iterate` returns), or into any
 * other sink a caller of `SegmentEngine.iterateInto` makes on {@link CappedPageSink} (the gRPC
 * service writes the bytes of an `IterateResponse` straight from the ranges:
 * segmentstore/service/wire-page-sink.ts). Every such sink applies the same page caps.
 */
import { PageCaps } from './page-caps';
import type { Page } from './page-reader';

const EMPTY = Buffer.alloc(0);

/** The entries of one page, as the reader finds them. */
export interface FamilyPageSink<P> {
  /**
   * Adds one entry: key `record[keyStart, keyEnd)`, value `record[valueStart, valueEnd)`. False when
   * it does not fit: the page is complete and something follows. A page always takes its first entry.
   */
  add(record: Buffer, keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: number): boolean;
  /** The finished page. */
  finish(done: boolean): P;
}

/** The shape of a page a sink is made for: its caps, and whether it holds values. */
export interface PageShape {
  maxItems: number;
  /** The cap on the key and value bytes of a page (a page always takes its first entry). */
  pageBytes: number;
  includeValues: boolean;
}

/** Makes the sink of one page. */
export type PageSinkFactory<P> = (shape: PageShape) => FamilyPageSink<P>;

/**
 * What every family page sink shares: the caps, applied to entries given as record ranges; a sink
 * supplies what it does with an admitted entry (`take`) and the finished page.
 */
export abstract class CappedPageSink<P> implements FamilyPageSink<P> {
  private readonly caps: PageCaps;

  constructor(
    maxItems: number,
    pageBytes: number,
    protected readonly includeValues: boolean,
  ) {
    this.caps = new PageCaps(maxItems, pageBytes);
  }

  add(record: Buffer, keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: number): boolean {
    if (!this.includeValues) valueEnd = valueStart;
    if (!this.caps.admit(keyEnd - keyStart + (valueEnd - valueStart))) return false;
    this.take(record, keyStart, keyEnd, valueStart, valueEnd, sequence);
    return true;
  }

  protected abstract take(record: Buffer, keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: number): void;
  abstract finish(done: boolean): P;
}

/** Builds a {@link Page}: keys and values are views into the records. */
export class ObjectPageSink extends CappedPageSink<Page> {
  private readonly items: Page['items'] = [];

  protected take(record: Buffer, keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: number): void {
    const value = valueEnd > valueStart ? record.subarray(valueStart, valueEnd) : EMPTY;
    this.items.push({ found: true, key: record.subarray(keyStart, keyEnd), value, sequence: String(sequence) });
  }

  finish(done: boolean): Page {
    return { items: this.items, done };
  }
}
