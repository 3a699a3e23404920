/**
 * Paging over one key family with the store's Iterate RPC. Each page holds exactly `maxKeysAtOnce`
 * items unless the family ends or the 2 MiB page cap ends it first: the store applies the cap, so an
 * answer with fewer items than asked for and more to come is a complete page. (Asking again to fill
 * it, as this once did, made pages of up to twice the cap.) Consistency: pages continue
 * strictly after (before, in reverse) the last key returned, so no key is returned twice and an entry
 * written or removed between pages shows up or not according to its position relative to that key.
 */
import { MAX_ITERATOR_PAGE_BYTES, MAX_ITERATOR_PAGE_ITEMS } from '../../proto/limits';
import type { IterateRequest } from '../../proto/messages';
import { IteratorState, pageWithState } from './iterator-state';
import type { Route } from './routing';
import type { RoutingTable } from './routing';
import type { TableTransport } from './table-transport';
import { decodeIteratePage, PageItemBuilder } from './wire-decoder';

/** One filled page: its items and the state to resume after it. */
export interface Page<T> {
  items: T[];
  state: string;
}

function requestOf(s: IteratorState, segmentId: string, maxItems: number): IterateRequest {
  return {
    segmentId,
    family: s.family,
    includeValues: s.entries,
    maxItems,
    prefix: s.prefix,
    from: s.from,
    to: s.to,
    toInclusive: s.toInclusive,
    reverse: s.reverse,
    hasAfter: s.after !== undefined,
    after: s.after ?? Buffer.alloc(0),
  };
}

/**
 * The filled pages of an iteration from `state` on (mutating it as it goes); `builder` gives, for the
 * segment an answer came from, what turns each of its entries into an item.
 */
export function iteratePages<T>(transport: TableTransport, pick: (t: RoutingTable) => Route, state: IteratorState, builder: (segmentId: string) => PageItemBuilder<T>): AsyncIterableIterator<Page<T>> {
  return new PageIterator(transport, pick, state, builder);
}

const DONE: IteratorResult<never, undefined> = Object.freeze({ done: true, value: undefined });

/**
 * What an async generator over the pages would be, without its cost: a layer's read of one key is
 * the first page of an iterator, and a generator's machinery (its own promises and a suspended frame
 * per step) cost about as much client CPU as the rest of such a read. Behaves as the generator did:
 * calls of next() made while a page is being read are answered in order, after it; a failed read
 * ends the iteration; return() ends it.
 */
class PageIterator<T> implements AsyncIterableIterator<Page<T>> {
  /** Ended: by the family's end, a failure or return(). */
  private ended = false;
  /** A page is being read, or calls of next() wait for their turn. */
  private busy = false;
  /** Calls of next() waiting for their turn. */
  private waiting = 0;
  /** The answer of the latest call of next(): the next one waits for it while busy. */
  private tail: Promise<IteratorResult<Page<T>>> = Promise.resolve(DONE);

  constructor(
    private readonly transport: TableTransport,
    private readonly pick: (t: RoutingTable) => Route,
    private readonly state: IteratorState,
    private readonly builder: (segmentId: string) => PageItemBuilder<T>,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Page<T>>> {
    if (this.busy) {
      this.waiting++;
      const after = (): Promise<IteratorResult<Page<T>>> => {
        this.waiting--;
        return this.step();
      };
      return (this.tail = this.tail.then(after, after));
    }
    return (this.tail = this.step());
  }

  return(): Promise<IteratorResult<Page<T>>> {
    this.ended = true;
    return Promise.resolve(DONE);
  }

  /** Reads the next page; called only when no other is being read. */
  private step(): Promise<IteratorResult<Page<T>>> {
    if (this.ended || this.state.done) {
      this.ended = true;
      this.busy = this.waiting > 0;
      return Promise.resolve(DONE);
    }
    this.busy = true;
    return this.fill([], 0);
  }

  /** Reads answers into `items` until the page is full, the family ends or the page cap ends it. */
  private fill(items: T[], bytes: number): Promise<IteratorResult<Page<T>>> {
    const { state } = this;
    const asked = Math.min(state.maxKeysAtOnce - items.length, MAX_ITERATOR_PAGE_ITEMS);
    return this.transport
      .read('Iterate', this.pick, (segment) => requestOf(state, segment, asked))
      .then(
        ({ response, route }): IteratorResult<Page<T>> | Promise<IteratorResult<Page<T>>> => {
          try {
            const page = decodeIteratePage(response, this.builder(route.segmentId));
            bytes += page.bytes;
            // Usually one answer fills the page: take its array rather than copying it.
            if (items.length === 0) items = page.items;
            else for (let i = 0; i < page.items.length; i++) items.push(page.items[i]);
            // Only the last key is the position (a copy: the token never pins the response buffer).
            if (page.lastKey) state.after = page.lastKey;
            // An empty answer ends the iteration even without `done`, so a confused store cannot loop us forever.
            if (page.done || page.items.length === 0) state.done = true;
            // The store's page cap ends a page early (and the cap counted here guards against a store
            // that answers short for another reason).
            if (!(page.done || page.items.length < asked || bytes >= MAX_ITERATOR_PAGE_BYTES) && items.length < state.maxKeysAtOnce) return this.fill(items, bytes);
          } catch (err) {
            return this.fail(err);
          }
          this.busy = this.waiting > 0;
          if (items.length === 0) {
            this.ended = true;
            return DONE;
          }
          return { done: false, value: pageWithState(items, state) };
        },
        (err: unknown) => this.fail(err),
      );
  }

  private fail(err: unknown): never {
    this.busy = this.waiting > 0;
    this.ended = true;
    throw err;
  }
}
