/**
 * The document counts of a feed family (feed-counts.ts) on the in-memory table: what the suite's
 * counting cases cannot reach deterministically — a fold that runs while a count reads the deltas.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryKeyValueTable, Serializers } from '../../../client';
import type { BytesTable } from '../../../client/documents/document-reads';
import { deltaModification, FeedCounts } from '../../../client/documents/feed-counts';
import { COUNT_PREFIX } from '../../../client/documents/key-layout';

const FAMILY = 'c/0';

/** The table, where a read of the count records pages one entry at a time and runs `between` once, after its second page. */
function foldingBetweenPages(table: BytesTable, between: () => Promise<void>): BytesTable {
  let ran = false;
  return new Proxy(table, {
    get(t, prop) {
      if (prop === 'entryIterator') {
        return (family: string, options: { prefix?: Uint8Array }) => {
          if (options.prefix === undefined || Buffer.compare(Buffer.from(options.prefix), COUNT_PREFIX) !== 0) return t.entryIterator(family, options as never);
          return (async function* () {
            let pages = 0;
            for await (const page of t.entryIterator(family, { ...options, maxKeysAtOnce: 1 } as never)) {
              yield page;
              if (++pages === 2 && !ran) {
                ran = true;
                await between();
              }
            }
          })();
        };
      }
      const v = (t as unknown as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

/** The table, running `before` once before its first update. */
function beforeFirstUpdate(table: BytesTable, before: () => Promise<void>): BytesTable {
  let ran = false;
  return new Proxy(table, {
    get(t, prop) {
      if (prop === 'update') {
        return async (family: string, mods: never) => {
          if (!ran) {
            ran = true;
            await before();
          }
          return t.update(family, mods);
        };
      }
      const v = (t as unknown as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

const bytesTable = () => new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 1 });
const ONE = { documents: 1, deletedDocuments: 0 };

describe('FeedCounts.count', () => {
  it('reads the records again when a fold ran during its read, so the deltas the fold took in are still counted', async () => {
    const table = bytesTable();
    const other = new FeedCounts(table);
    expect(await other.count(FAMILY)).toEqual({ documents: 0, deletedDocuments: 0 });
    for (let i = 0; i < 5; i++) await table.update(FAMILY, deltaModification(ONE));
    // The read sees the summary and one delta; then the other client folds all five into the summary.
    const counts = new FeedCounts(foldingBetweenPages(table, () => other.fold(FAMILY)));
    expect(await counts.count(FAMILY)).toEqual({ documents: 5, deletedDocuments: 0 });
    expect(await other.count(FAMILY)).toEqual({ documents: 5, deletedDocuments: 0 });
  });
});

describe('FeedCounts.fold', () => {
  it('leaves the summary to a fold that went first, so a delta written meanwhile is counted once and not lost', async () => {
    const table = bytesTable();
    const other = new FeedCounts(table);
    await other.count(FAMILY);
    await table.update(FAMILY, deltaModification(ONE));
    // This fold has read the summary and the first delta; before it writes, another delta lands and the other client folds both.
    const late = new FeedCounts(
      beforeFirstUpdate(table, async () => {
        await table.update(FAMILY, deltaModification(ONE));
        await other.fold(FAMILY);
      }),
    );
    await late.fold(FAMILY);
    expect(await other.count(FAMILY)).toEqual({ documents: 2, deletedDocuments: 0 });
  });
});
