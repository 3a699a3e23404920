/**
 * The changes feed's promise checked under a race, not in chosen interleavings: writers edit, delete
 * and re-create documents while a reader pages through the feed from each `lastSeq` it got. Some
 * writers index late (their feed updates wait a few milliseconds) and some never do (their writer
 * "dies" after the commit), so reads meet markers to repair and index updates in flight.
 *
 * What every reader of a changes feed relies on (docs/documents.md, "Why this order is the one
 * clients need"), checked after each chain of pages that reached the feed's end:
 * - nothing missed: every edit that had resolved before the chain began has been listed, at its
 *   position or a newer one of the same document;
 * - within one read, a document at most once; across resumed reads, never at an older position than
 *   one already listed, and only at revisions some edit made;
 * - at the end, a read from the beginning lists each document once, at its winner.
 */
import { describe, expect, it } from 'vitest';
import { DocumentConflictError, DocumentStore } from '../../client';
import { allChanges, beforeFeedListing, delayedFeedWrites, DocumentsSuiteContext, failingFeedWrites, random } from './documents-context';

const position = (rev: string): number => Number(rev.slice(0, rev.indexOf('-')));

/** What the writers did to one document, as they saw it resolve. */
interface DocumentHistory {
  /** The newest revision an edit resolved with, and its position; undefined before the first. */
  rev: string | undefined;
  /** Whether that revision is a deletion. */
  deleted: boolean;
  /** Every revision an edit made. */
  made: Set<string>;
  /** Position of the newest edit resolved, stamped with the logical time it resolved at. */
  resolved: { position: number; at: number }[];
}

const DOCUMENTS = 24;
const WRITERS = 6;
const EDITS_PER_WRITER = 60;

export function feedRaceSuite(ctx: DocumentsSuiteContext): void {
  describe('DocumentStore.changes under racing writers', () => {
    for (const seed of [1, 2]) {
      it(`misses no resolved edit, lists none twice in a read and never goes back (seed ${seed})`, async () => {
        const { store, table } = await ctx.store();
        const next = random(seed);
        const options = ctx.target().storeOptions;
        // Writers 0-1 index at once, 2-3 late, 4-5 late and, now and then, never (through a store whose feed writes fail).
        const late = delayedFeedWrites(table, () => new Promise((r) => setTimeout(r, Math.floor(next() * 15))));
        const writers = Array.from({ length: WRITERS }, (_, w) => (w < 2 ? store : new DocumentStore(late, options)));
        const dying = new DocumentStore(failingFeedWrites(table), options);
        const ids = Array.from({ length: DOCUMENTS }, (_, i) => `race-${i}`);
        const docs = new Map<string, DocumentHistory>(ids.map((id) => [id, { rev: undefined, deleted: false, made: new Set(), resolved: [] }]));
        let clock = 0;

        const edit = async (writer: DocumentStore, id: string): Promise<void> => {
          const doc = docs.get(id)!;
          let rev: string;
          let deleted = false;
          try {
            if (doc.rev === undefined || doc.deleted) rev = (await writer.put(id, { n: clock })).rev;
            else if (next() < 0.15) {
              rev = (await writer.remove(id, doc.rev)).rev;
              deleted = true;
            } else rev = (await writer.put(id, { n: clock }, { rev: doc.rev })).rev;
          } catch (err) {
            // Another writer moved the document first: its edit is recorded by that writer.
            if (!(err instanceof DocumentConflictError)) throw err;
            return;
          }
          doc.made.add(rev);
          if (doc.rev === undefined || position(rev) > position(doc.rev)) {
            doc.rev = rev;
            doc.deleted = deleted;
          }
          doc.resolved.push({ position: position(rev), at: ++clock });
        };

        let writing = true;
        const writes = Promise.all(
          writers.map(async (writer, w) => {
            for (let i = 0; i < EDITS_PER_WRITER; i++) {
              const id = ids[Math.floor(next() * ids.length)];
              await edit(w >= 4 && next() < 0.1 ? dying : writer, id);
            }
          }),
        ).finally(() => (writing = false));

        // The reader: chains of pages of random sizes, each chain from where the last one ended.
        // Its listings start late, so that edits commit and get indexed between its repair and its listing.
        const reader = new DocumentStore(
          beforeFeedListing(table, () => new Promise((r) => setTimeout(r, Math.floor(next() * 10)))),
          options,
        );
        const listed = new Map<string, number>();
        let since: string | undefined;
        const readChain = async (): Promise<void> => {
          const began = clock;
          const limit = 1 + Math.floor(next() * 12);
          for (let page = 0; ; page++) {
            expect(page).toBeLessThan(10_000);
            const res = await reader.changes({ ...(since === undefined ? {} : { since }), limit });
            const once = new Set<string>();
            for (const r of res.results) {
              expect(once.has(r.id), `${r.id} listed twice in one read`).toBe(false);
              once.add(r.id);
              const doc = docs.get(r.id)!;
              // A revision some edit made (one whose writer saw it resolve, or one not answered yet).
              if (!doc.made.has(r.rev)) expect(position(r.rev)).toBeGreaterThan(position(doc.rev ?? '0-'));
              expect(position(r.rev), `${r.id} listed at an older position`).toBeGreaterThanOrEqual(listed.get(r.id) ?? 0);
              listed.set(r.id, position(r.rev));
            }
            since = res.lastSeq;
            if (res.results.length < limit) break;
          }
          for (const [id, doc] of docs) {
            const due = doc.resolved.filter((e) => e.at <= began).reduce((p, e) => Math.max(p, e.position), 0);
            expect(listed.get(id) ?? 0, `${id}: an edit at position ${due} resolved before the read began`).toBeGreaterThanOrEqual(due);
          }
        };
        while (writing) await readChain();
        await writes;
        await Promise.all(writers.map((w) => w.close()));
        await dying.close();
        await readChain();

        // The end state: one entry per document, at its winner, from the beginning and from the reader's place.
        const everything = await allChanges(reader);
        const winners = new Map([...docs].filter(([, d]) => d.rev !== undefined).map(([id, d]) => [id, [d.rev, d.deleted]]));
        expect(new Map(everything.map((r) => [r.id, [r.rev, r.deleted]]))).toEqual(winners);
        expect(everything.length).toBe(winners.size);
        for (const [id, [rev]] of winners) expect(listed.get(id)).toBe(position(rev as string));
        await reader.close();
      });
    }
  });
}
