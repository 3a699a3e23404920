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
 * Yields the filled pages of an iteration from `state` on (mutating it as it goes); `builder` gives,
 * for the segment an answer came from, what turns each of its entries into an item.
 */
export async function* iteratePages<T>(transport: TableTransport, pick: (t: RoutingTable) => Route, state: IteratorState, builder: (segmentId: string) => PageItemBuilder<T>): AsyncGenerator<Page<T>> {
  while (!state.done) {
    let items: T[] = [];
    let bytes = 0;
    while (items.length < state.maxKeysAtOnce) {
      const asked = Math.min(state.maxKeysAtOnce - items.length, MAX_ITERATOR_PAGE_ITEMS);
      const { response, route } = await transport.read('Iterate', pick, (segment) => requestOf(state, segment, asked));
      const page = decodeIteratePage(response, builder(route.segmentId));
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
      if (page.done || page.items.length < asked || bytes >= MAX_ITERATOR_PAGE_BYTES) break;
    }
    if (items.length === 0) return;
    yield pageWithState(items, state);
  }
}
