/**
 * Test oracles for fault tests: a seeded PRNG, the acknowledged-writes log of a test (what the data
 * must be after any crash), and small raw-gRPC helpers (routing, Scan checksums) that look at the
 * servers without going through the client under test.
 */
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import type { Routing, ScanResponse } from '../../proto/messages';
import { partitionIndex, routingPoint } from '../../client/internal/hashing';
import type { Version } from '../../client';
import { seededRandom } from '../../bench/core/keys';

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence, so failures replay. */
export const mulberry32 = seededRandom;

/** What the oracle knows of one key: the last acknowledged state and writes of unknown outcome since. */
interface KeyState {
  /** Last acknowledged value (null: removed / never written) and the version it got. */
  value: string | null;
  version: Version | null;
  /** Values of writes whose outcome is unknown (UnavailableError with maybeApplied) since the last ack. */
  maybe: (string | null)[];
}

/** A mismatch between the oracle and the data. */
export interface OracleMismatch {
  key: string;
  expected: string;
  actual: string;
}

/**
 * The acknowledged-writes log. Callers must serialize the writes of one key (one writer per key):
 * the oracle then knows the exact order. An acknowledged write fixes the key's value and version
 * (and must carry a version newer than the previous acknowledged one); a write of unknown outcome
 * makes its value acceptable until the next acknowledged write; a write surely not applied changes
 * nothing.
 */
export class WriteOracle {
  private readonly keys = new Map<string, KeyState>();
  /** Acknowledged writes recorded. */
  acknowledged = 0;
  /** Writes of unknown outcome recorded. */
  uncertain = 0;
  /** Acknowledged versions that did not increase (must stay 0). */
  readonly versionRegressions: string[] = [];

  private state(key: string): KeyState {
    let s = this.keys.get(key);
    if (!s) this.keys.set(key, (s = { value: null, version: null, maybe: [] }));
    return s;
  }

  /** Records an acknowledged write (value null: an acknowledged remove). */
  acknowledge(key: string, value: string | null, version: Version | null): void {
    const s = this.state(key);
    if (version && s.version && version.compareTo(s.version) <= 0) {
      this.versionRegressions.push(`${key}: ${s.version.toString()} then ${version.toString()}`);
    }
    s.value = value;
    if (version) s.version = version;
    s.maybe = [];
    this.acknowledged++;
  }

  /** Records a write whose outcome is unknown. */
  uncertainWrite(key: string, value: string | null): void {
    this.state(key).maybe.push(value);
    this.uncertain++;
  }

  /**
   * Records a read of a key by its only writer (resolving earlier unknown outcomes): the value must be
   * one the log allows; it then counts as acknowledged.
   */
  observe(key: string, value: string | null, version: Version | null): void {
    const s = this.state(key);
    if (![s.value, ...s.maybe].includes(value)) {
      this.observedMismatches.push(`${key}: read ${JSON.stringify(value)}, allowed ${JSON.stringify([s.value, ...s.maybe])}`);
    }
    s.value = value;
    s.version = version;
    s.maybe = [];
  }

  /** Reads (observe) that found a value the log does not allow (must stay empty). */
  readonly observedMismatches: string[] = [];

  /** The last acknowledged version of a key (for conditional writes), or null. */
  versionOf(key: string): Version | null {
    return this.keys.get(key)?.version ?? null;
  }

  /** Number of keys the oracle knows. */
  get size(): number {
    return this.keys.size;
  }

  /**
   * Compares the data (key → value and version) with the log: every key's value must be its last
   * acknowledged value or one of the uncertain values after it; with no uncertain write, the version
   * must be exactly the acknowledged one. Keys in the data the oracle never wrote are mismatches too.
   */
  check(data: Map<string, { value: string; version: Version }>): OracleMismatch[] {
    const out: OracleMismatch[] = [];
    for (const [key, s] of this.keys) {
      const actual = data.get(key);
      const allowed = [s.value, ...s.maybe];
      if (!allowed.includes(actual?.value ?? null)) {
        out.push({ key, expected: JSON.stringify(allowed), actual: JSON.stringify(actual?.value ?? null) });
      } else if (s.maybe.length === 0 && actual && s.version && !actual.version.equals(s.version)) {
        out.push({ key, expected: `version ${s.version.toString()}`, actual: `version ${actual.version.toString()}` });
      }
    }
    for (const key of data.keys()) {
      if (!this.keys.has(key)) out.push({ key, expected: 'absent', actual: 'present' });
    }
    return out;
  }
}

/** A method of a raw client, called with a request, options and a callback. */
type RawMethod = (...args: unknown[]) => unknown;

/** A raw client of `kvt.v1.Controller` or `kvt.v1.SegmentStore` at `address` (loopback, plaintext). */
export function rawClient(service: 'Controller' | 'SegmentStore', address: string): grpc.Client & Record<string, RawMethod> {
  const Ctor = kvtPackage()[service];
  return new Ctor(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as grpc.Client & Record<string, RawMethod>;
}

/** Calls a unary method of a raw client with a deadline. */
export function rawCall<Res>(client: grpc.Client & Record<string, RawMethod>, method: string, request: unknown, timeoutMs = 10_000): Promise<Res> {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + timeoutMs }, (err: grpc.ServiceError | null, res: Res) => (err ? reject(err) : resolve(res)));
  });
}

/** The routing of a table, straight from the controller. */
export async function fetchRouting(controller: string, scope: string, table: string): Promise<Routing> {
  const client = rawClient('Controller', controller);
  try {
    return await rawCall<Routing>(client, 'GetRouting', { scope, table });
  } finally {
    client.close();
  }
}

/** The store id owning the partition of `family` (string keys without family are not supported here). */
export function ownerOf(routing: Routing, family: string): string {
  const p = partitionIndex(routingPoint(family, Buffer.alloc(0)), routing.partitionCount);
  return routing.partitions.find((q) => q.index === p)!.storeId;
}

/**
 * A SHA-256 over every entry (family, key, value, sequence) of the given segments, read page by page
 * with the Scan RPC of the store at `address`; also returns the number of entries.
 */
export async function scanChecksum(address: string, segmentIds: string[]): Promise<{ digest: string; entries: number }> {
  const client = rawClient('SegmentStore', address);
  const hash = createHash('sha256');
  let entries = 0;
  try {
    for (const segmentId of [...segmentIds].sort()) {
      hash.update(`segment ${segmentId}\n`);
      let after: Buffer = Buffer.alloc(0);
      for (let page = 0; page < 100_000; page++) {
        const res = await rawCall<ScanResponse>(client, 'Scan', { segmentId, includeValues: true, maxItems: 500, after });
        for (const item of res.items) {
          hash.update(JSON.stringify([item.family, Buffer.from(item.key).toString('hex'), Buffer.from(item.value).toString('hex'), item.sequence]));
          entries++;
        }
        if (res.done || res.items.length === 0) break;
        after = Buffer.from(res.position);
      }
    }
  } finally {
    client.close();
  }
  return { digest: hash.digest('hex'), entries };
}
