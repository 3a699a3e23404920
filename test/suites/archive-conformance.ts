/**
 * The archive conformance suite: every ArchiveStore behaviour through the public interface, run
 * against KvtArchiveStore on the in-memory table (test/unit/archive/), on a real cluster and
 * CassandraArchiveStore on a real Cassandra (test/integration/archive-*.test.ts), so the stores
 * cannot drift apart.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { blocksConformance } from './archive-blocks';
import { ArchiveCapabilities, concurrencyConformance } from './archive-concurrency';
import type { ArchiveSuiteContext, ArchiveTarget } from './archive-context';
import { corruptionConformance } from './archive-corruption';
import { roundTripConformance } from './archive-roundtrip';

/** Registers the whole suite under `describe(name)`. */
export function archiveConformance(name: string, start: () => Promise<ArchiveTarget>, can: ArchiveCapabilities): void {
  describe(`ArchiveStore conformance: ${name}`, () => {
    let target: ArchiveTarget;
    const ctx: ArchiveSuiteContext = { target: () => target };
    beforeAll(async () => {
      target = await start();
    }, 600_000);
    afterAll(async () => {
      await target?.dispose();
    }, 120_000);
    roundTripConformance(ctx);
    blocksConformance(ctx);
    corruptionConformance(ctx);
    concurrencyConformance(ctx, can);
  });
}
