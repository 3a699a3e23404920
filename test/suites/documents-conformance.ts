/**
 * The document store suite: every behaviour of DocumentStore (DESIGN §5, issue 33) through the public
 * client API (and what the CouchDB endpoint needs: local documents, listings; issue 34), run against any {@link DocumentsTarget} — the in-memory table
 * (test/unit/documents/document-store.test.ts) and a real cluster (test/integration/documents.test.ts)
 * — so that the layer behaves the same on both.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { DocumentStore } from '../../client';
import { changesSuite } from './documents-changes';
import { concurrencySuite } from './documents-concurrency';
import type { DocumentsSuiteContext, DocumentsTarget } from './documents-context';
import { editsSuite } from './documents-edits';
import { feedRaceSuite } from './documents-feed-race';
import { limitsSuite } from './documents-limits';
import { listingSuite } from './documents-listing';
import { localSuite } from './documents-local';
import { replicationSuite } from './documents-replication';
import { stemmingSuite } from './documents-stemming';

/** Registers the whole suite under `describe(name)`. */
export function documentsConformance(name: string, start: () => Promise<DocumentsTarget>): void {
  describe(`DocumentStore: ${name}`, () => {
    let target: DocumentsTarget;
    const ctx: DocumentsSuiteContext = {
      target: () => target,
      async store(options = {}) {
        const table = await target.table();
        const open = (o = options) => new DocumentStore(table, { ...target.storeOptions, ...o });
        return { store: open(), table, another: open };
      },
    };
    beforeAll(async () => {
      target = await start();
    });
    afterAll(async () => {
      await target?.dispose();
    });
    editsSuite(ctx);
    replicationSuite(ctx);
    stemmingSuite(ctx);
    changesSuite(ctx);
    feedRaceSuite(ctx);
    concurrencySuite(ctx);
    limitsSuite(ctx);
    localSuite(ctx);
    listingSuite(ctx);
  });
}
