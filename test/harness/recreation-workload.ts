/**
 * The linearizability workload of a table deleted and created again under live handles (see
 * incarnations.ts for how its history is checked): the workload of kv-workload.ts without TTLs, and
 * besides it getAlls of several family-less keys (spread over the partitions, grouped by partition
 * with the routing the handle has), puts of family-less keys, and scans of the whole table
 * (scanEntries, over the partitions of the routing at its start). A client pauses before some of its
 * operations, so that it comes back with the routing of a table since deleted, after the others have
 * written to the new one.
 *
 * A scan is recorded as one read per key of the workload, present or not, each over the whole scan
 * (each key's partition was read at some moment of it); the versions of all its entries are kept
 * with each of those reads, since a scan never mixes two incarnations ({@link RecreationClient.sharedAnswer}).
 */
import { performance } from 'node:perf_hooks';
import type { TableEntry } from '../../client';
import type { KvOp, Observed } from './kv-model';
import { WorkloadClient } from './kv-workload';
import { guard } from './load';

/** The share of operations a client pauses before, and how long (ms). */
const PAUSE_SHARE = 0.08;
const PAUSE_MS = [150, 400];
/** Entries of one scan page asked for: more than the workload has keys, so a partition is one page. */
const SCAN_PAGE = 100;

/** A client of the workload on a table re-created under it. */
export class RecreationClient extends WorkloadClient {
  readonly shapes = { scans: 0, getAllsAcross: 0 };
  /** The versions of each scan, by the ids of the reads it was recorded as. */
  private readonly scanAnswers = new Map<number, readonly string[]>();

  override async step(): Promise<void> {
    // Now and then a pause, so that a handle next calls with the routing of a table since re-created,
    // after the other clients have written to the new one.
    if (this.rand() < PAUSE_SHARE) await new Promise((r) => setTimeout(r, PAUSE_MS[0] + Math.floor(this.rand() * (PAUSE_MS[1] - PAUSE_MS[0]))));
    const r = this.rand();
    if (r < 0.12) return this.scan();
    if (r < 0.3) {
      this.shapes.getAllsAcross++;
      const solo = this.keys.soloKeys;
      return this.read(null, this.some(solo, 3 + Math.floor(this.rand() * (solo.length - 2))), 'getAll');
    }
    if (r < 0.45) return this.put(null, this.pick(this.keys.soloKeys));
    return super.step();
  }

  /** No TTLs: expiries would only widen what each incarnation's check allows. */
  protected override ttl(): number | undefined {
    return undefined;
  }

  /** The versions answered together with `op` (by the same scan), for attribute(). */
  sharedAnswer(op: KvOp): readonly string[] {
    return this.scanAnswers.get(op.id) ?? [];
  }

  /** Scans the whole table and records what it saw of every key of the workload. */
  async scan(): Promise<void> {
    this.shapes.scans++;
    const invokedAt = performance.now();
    const pages = this.table.scanEntries({ maxKeysAtOnce: SCAN_PAGE });
    const seen = new Map<string, TableEntry<string, string>>();
    try {
      for (let n = 0; n < 50; n++) {
        const next = await guard(pages.next(), 'scanEntries page');
        if (next.done) break;
        for (const e of next.value.items) {
          const at = `${e.family ?? '~'}/${e.key}`;
          if (seen.has(at)) this.recorder.unexpected.push(`scanEntries returned ${at} twice`);
          seen.set(at, e);
        }
      }
    } catch (err) {
      return this.recorder.readFailed('scanEntries', err, invokedAt);
    }
    const completedAt = performance.now();
    const versions = [...seen.values()].map((e) => e.version.toString());
    const record = (group: string, at: string, key: string) => {
      const e = seen.get(at);
      seen.delete(at);
      const value: Observed | null = e ? { key, value: e.value, version: e.version.toString() } : null;
      const id = this.recorder.id();
      this.scanAnswers.set(id, versions);
      this.recorder.ops.push({ id, client: this.client, group, name: 'scanEntries', invokedAt, completedAt, f: 'read', keys: [key], values: [value] });
    };
    for (const family of this.keys.families) for (const key of this.keys.familyKeys) record(family, `${family}/${key}`, key);
    for (const key of this.keys.soloKeys) record(`~${key}`, `~/${key}`, key);
    for (const at of seen.keys()) this.recorder.unexpected.push(`scanEntries returned ${at.slice(0, 40)}, which no client writes`);
  }
}
