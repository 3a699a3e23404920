/**
 * The client-level conformance suite: every table operation of DESIGN §2 through the public
 * {@link KeyValueTable} interface, run against any {@link TableTarget} — the in-memory table
 * (test/unit/client/in-memory-key-value-table.test.ts) and the gRPC table on a real cluster
 * (test/integration/client-table-conformance.test.ts) — so that the two cannot drift apart. Each
 * case asks for fresh tables; errors are asserted by class, code and message.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { Serializers } from '../../client';
import { batchesConformance } from './table-conformance-batches';
import { iterationConformance } from './table-conformance-iteration';
import { limitsConformance } from './table-conformance-limits';
import { readsConformance } from './table-conformance-reads';
import { singleKeyConformance } from './table-conformance-single-key';
import { TableTarget, TableSuiteContext, utf8 } from './table-conformance-context';

/** Registers the whole suite under `describe(name)`. */
export function tableConformance(name: string, start: () => Promise<TableTarget>): void {
  describe(`KeyValueTable conformance: ${name}`, () => {
    let target: TableTarget;
    const ctx: TableSuiteContext = {
      target: () => target,
      strings: () => target.table(utf8),
      bytes: () => target.table({ keySerializer: Serializers.bytes, valueSerializer: Serializers.utf8 }),
    };
    beforeAll(async () => {
      target = await start();
      expect(target.partitionCount).toBeGreaterThan(1);
    });
    afterAll(async () => {
      await target?.dispose();
    });
    singleKeyConformance(ctx);
    batchesConformance(ctx);
    readsConformance(ctx);
    iterationConformance(ctx);
    limitsConformance(ctx);
  });
}
