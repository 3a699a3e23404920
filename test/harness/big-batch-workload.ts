/**
 * The linearizability workload of calls near the message limit: lanes sharing one factory (so one
 * coalescer packs their calls together) run batches of MAX_BATCH_ITEMS (256) keys in key families whose
 * names are 2,048 bytes long. The family travels with every modification and every get key, so
 * each such batch or getAll carries over half a MiB although its keys and values are a few bytes
 * each, and a few hundred of them queued for one store are more than one gRPC message holds (the
 * coalescer must cut them into calls by their encoded size, issue 39).
 *
 * Each lane works on one family, which it shares with a few other lanes (their conditions contend):
 * its first operation is a putAll of every key (so that all lanes start with a burst), then a mix of
 * putAll of every key, update of every key (unconditional puts and removes, now and then a condition
 * on a version seen and a range removal), getAll of every key, single-key operations and entry
 * iteration in pages of 128. No TTLs: every write of a batch would add an expiry to the check.
 *
 * {@link ExecuteCallProbe} records what each Execute call of a factory carries, to show that the
 * calls really were large.
 */
import { KeyValueTableFactory, MAX_BATCH_ITEMS, TableModification } from '../../client';
import type { ExecuteStreams } from '../../client/internal/execute-streams';
import type { ClientExecuteRequest } from '../../client/internal/wire-codec';
import { toModelMod, WorkloadClient } from './kv-workload';

/** The keys of every family: `k000` … `k255`, one full batch. */
export const BIG_FAMILY_KEYS = Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => `k${String(i).padStart(3, '0')}`);

/** Operations of a lane by shape (statistics; `big`: the batches and getAlls of every key). */
export interface BigBatchShapes {
  putAll: number;
  update: number;
  getAll: number;
  small: number;
  iterations: number;
}

/** A lane of the workload on one long family (`keys.families`: that one family). */
export class BigBatchClient extends WorkloadClient {
  readonly shapes: BigBatchShapes = { putAll: 0, update: 0, getAll: 0, small: 0, iterations: 0 };
  private started = false;

  override async step(): Promise<void> {
    const family = this.keys.families[0];
    const r = this.started ? this.rand() : 0;
    this.started = true;
    if (r < 0.3) return this.putAllKeys(family);
    if (r < 0.55) return this.updateAllKeys(family);
    if (r < 0.8) {
      this.shapes.getAll++;
      return this.read(family, this.keys.familyKeys, 'getAll');
    }
    if (r < 0.92) {
      this.shapes.small++;
      const key = this.pick(this.keys.familyKeys);
      return this.rand() < 0.3 ? this.read(family, [key], 'get') : this.single(family, key, this.rand());
    }
    this.shapes.iterations++;
    return this.iterateWith(family, { maxKeysAtOnce: 128, reverse: this.rand() < 0.5 }, {}, 3);
  }

  /** No TTLs in this workload (see the file comment). */
  protected override ttl(): number | undefined {
    return undefined;
  }

  private putAllKeys(family: string): Promise<void> {
    this.shapes.putAll++;
    const entries = this.keys.familyKeys.map((k) => [k, this.value(k)] as const);
    return this.update(
      family,
      'putAll',
      entries.map(([key, value]) => ({ type: 'put', key, value })),
      () => this.table.putAll(family, entries),
    );
  }

  /**
   * An update of every key (one fewer with a range removal in front): mostly unconditional puts, a
   * fifth removals, and at most two puts on a version this lane saw.
   */
  private updateAllKeys(family: string): Promise<void> {
    this.shapes.update++;
    const withRange = this.rand() < 0.2;
    const keys = withRange ? this.some(this.keys.familyKeys, this.keys.familyKeys.length - 1) : this.keys.familyKeys;
    const conditional = new Set(this.some(keys, Math.floor(this.rand() * 3)));
    const mods: TableModification<string, string>[] = keys.map((key) => {
      if (conditional.has(key)) return { type: 'put', key, value: this.value(key), version: this.condition(family, key) };
      return this.rand() < 0.2 ? { type: 'remove', key } : { type: 'put', key, value: this.value(key) };
    });
    // A range of about a tenth of the keys (`k1` spans k100…k199: a prefix), removed before the rest apply.
    if (withRange) mods.unshift(this.rand() < 0.5 ? { type: 'removeRange', prefix: 'k1' } : { type: 'removeRange', from: 'k020', to: 'k045' });
    return this.update(family, 'update', mods.map(toModelMod), () => this.table.update(family, mods));
  }
}

/** Payload bytes of one Execute request: its encoded modifications, and its get keys with their families. */
function payloadBytes(request: ClientExecuteRequest): number {
  let bytes = 0;
  for (const sub of request.requests) {
    if (sub.update) bytes += sub.update.modifications.bytes.length;
    else if (sub.get) for (const k of sub.get.keys) bytes += Buffer.byteLength(k.family ?? '') + (k.key?.length ?? 0);
  }
  return bytes;
}

/**
 * Records the payload bytes of every Execute call a factory sends on its ExecuteStreams (a test
 * probe on the client's internals, as client-data-plane reads the coalescer's counters): what its
 * coalescer packed into each call, as the store receives it less a little framing.
 */
export class ExecuteCallProbe {
  /** Payload bytes of each call, in the order sent. */
  readonly calls: number[] = [];

  constructor(factory: KeyValueTableFactory) {
    const streams = (factory as unknown as { coalescer: { streams?: ExecuteStreams } }).coalescer.streams;
    if (!streams) throw new Error('the probe needs a factory whose calls travel on ExecuteStreams (coalescing.streams)');
    const execute = streams.execute.bind(streams);
    streams.execute = (address, request, deadline) => {
      this.calls.push(payloadBytes(request));
      return execute(address, request, deadline);
    };
  }

  /** The largest call's payload bytes. */
  get largest(): number {
    return this.calls.reduce((a, b) => Math.max(a, b), 0);
  }

  /** Calls carrying at least `bytes`. */
  atLeast(bytes: number): number {
    return this.calls.filter((b) => b >= bytes).length;
  }

  /** Payload bytes of every call together. */
  get total(): number {
    return this.calls.reduce((a, b) => a + b, 0);
  }
}
