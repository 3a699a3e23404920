/**
 * The page revision suite: every behaviour of PageRevisionStore (DESIGN §4, issue 31) through the
 * public client API, run against any {@link RevisionsTarget} — the in-memory table
 * (test/unit/revisions/page-revision-store.test.ts) and a real cluster
 * (test/integration/revisions.test.ts) — so that the layer behaves the same on both.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { PageRevisionStore } from '../../client';
import { archiveSuite } from './revisions-archive';
import { basicsSuite } from './revisions-basics';
import { batchSuite } from './revisions-batch';
import { FakeClock, RevisionsSuiteContext, RevisionsTarget } from './revisions-context';
import { historicalSuite } from './revisions-historical';
import { largeSuite } from './revisions-large';
import { listingSuite } from './revisions-listing';
import { retentionSuite } from './revisions-retention';
import { sharedDataSuite } from './revisions-shared-data';

/** Registers the whole suite under `describe(name)`. */
export function revisionsConformance(name: string, start: () => Promise<RevisionsTarget>): void {
  describe(`PageRevisionStore: ${name}`, () => {
    let target: RevisionsTarget;
    const ctx: RevisionsSuiteContext = {
      target: () => target,
      async store(options = {}) {
        const clock = new FakeClock();
        const table = await target.table();
        return { store: new PageRevisionStore(table, { clock: clock.read, ...options }), table, clock };
      },
    };
    beforeAll(async () => {
      target = await start();
    });
    afterAll(async () => {
      await target?.dispose();
    });
    basicsSuite(ctx);
    batchSuite(ctx);
    listingSuite(ctx);
    retentionSuite(ctx);
    historicalSuite(ctx);
    largeSuite(ctx);
    sharedDataSuite(ctx);
    archiveSuite(ctx);
  });
}
