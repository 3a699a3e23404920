/**
 * Paging over one key family with the store's Iterate RPC. Each page is filled to exactly
 * `maxKeysAtOnce` items (calling Iterate again with `after` = the last key when the store returned
 * fewer) unless the family ends or the 2 MiB page cap is reached. Consistency: pages continue
 * strictly after (before, in reverse) the last key returned, so no key is returned twice and an entry
 * written or removed between pages shows up or not according to its position relative to that key.
 */
import { MAX_ITERATOR_PAGE_BYTES, MAX_ITERATOR_PAGE_ITEMS } from '../../proto/limits';
import type { Entry, IterateRequest } from '../../proto/messages';
import { encodeState, IteratorState } from './iterator-state';
import type { Route } from './routing';
import type { RoutingTable } from './routing';
import type { TableTransport } from './table-transport';

/** One filled page: raw entries and the segment they came from. */
export interface RawPage {
  entries: Entry[];
  segmentId: string;
  state: string;
}

function requestOf(s: IteratorState, segmentId: string, maxItems: number): IterateRequest {
  return {
    segmentId, family: s.family, includeValues: s.entries, maxItems: Math.min(maxItems, MAX_ITERATOR_PAGE_ITEMS),
    prefix: s.prefix, from: s.from, to: s.to, toInclusive: s.toInclusive, reverse: s.reverse,
    hasAfter: s.after !== undefined, after: s.after ?? Buffer.alloc(0),
  };
}

/** Yields the filled pages of an iteration from `state` on (mutating it as it goes). */
export async function* iteratePages(transport: TableTransport, pick: (t: RoutingTable) => Route, state: IteratorState): AsyncGenerator<RawPage> {
  while (!state.done) {
    let entries: Entry[] = [];
    let bytes = 0;
    let segmentId = '';
    while (entries.length < state.maxKeysAtOnce) {
      const { response, route } = await transport.read('Iterate', pick, (segment) => requestOf(state, segment, state.maxKeysAtOnce - entries.length));
      segmentId = route.segmentId;
      const items = response.items;
      for (let i = 0; i < items.length; i++) bytes += items[i].key.length + items[i].value.length;
      // Usually one answer fills the page: take its array rather than copying it.
      if (entries.length === 0) entries = items;
      else for (let i = 0; i < items.length; i++) entries.push(items[i]);
      // Only the last key is the position; a copy, so the token never pins the response buffer.
      if (items.length > 0) state.after = Buffer.from(items[items.length - 1].key);
      // An empty answer ends the iteration even without `done`, so a confused store cannot loop us forever.
      if (response.done || response.items.length === 0) state.done = true;
      // The page cap ends a page early.
      if (response.done || response.items.length === 0 || bytes >= MAX_ITERATOR_PAGE_BYTES) break;
    }
    if (entries.length === 0) return;
    yield { entries, segmentId, state: encodeState(state) };
  }
}
