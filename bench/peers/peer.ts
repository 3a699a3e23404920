/**
 * The one interface every system under test implements, so each workload is written once and runs
 * the same against kvt, etcd (two clients), Pravega, Cassandra and raw LevelDB. Keys are strings; single-key
 * operations use no key family, batches and scans use one family (etcd and raw LevelDB: a prefix).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CpuSource } from '../core/cpu';

/** The columns of the report. */
export type PeerName = 'kvt' | 'etcd3' | 'etcd-grpc' | 'pravega' | 'cassandra' | 'raw';

/** All peers, in report order. */
export const PEER_NAMES: readonly PeerName[] = ['kvt', 'etcd3', 'etcd-grpc', 'pravega', 'cassandra', 'raw'];

/** The peers that run in a JVM of their own (Pravega, Cassandra): the quick mode leaves them out unless `--peers` names them. */
export const JVM_PEERS: readonly PeerName[] = ['pravega', 'cassandra'];

/** How long a JVM peer's servers are waited for to go idle after a round (see CpuSource.idleCapMs). */
export const JVM_IDLE_CAP_MS = 1_000;

/** A value read together with its opaque version (null when the key is absent). */
export interface VersionedValue {
  value: Buffer | null;
  version: string | null;
}

/** One entry of a batch. */
export interface BatchEntry {
  key: string;
  value: Buffer;
}

/** A client of one system under test. Every write is acknowledged only once durable. */
export interface Peer {
  readonly name: PeerName;
  /** Which server the CPU meter reads. */
  readonly cpu: CpuSource;
  put(key: string, value: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | null>;
  getVersioned(key: string): Promise<VersionedValue>;
  /** Writes only if the key's version is still `version` (null: still absent); false on a conflict. */
  replaceIf(key: string, value: Buffer, version: string | null): Promise<boolean>;
  /** Atomically writes all entries into one family. */
  putBatch(family: string, entries: BatchEntry[]): Promise<void>;
  /** Writes one key of a family (etcd and raw LevelDB: a key under the family's prefix). */
  putInFamily(family: string, key: string, value: Buffer): Promise<void>;
  /** Reads one key of a family (null when absent). */
  getInFamily(family: string, key: string): Promise<Buffer | null>;
  /**
   * Loads many family-less keys fast (setup only, not measured; need not be atomic). Peers without
   * a multi-key write for keys outside a family leave it out and get concurrent puts.
   */
  putMany?(entries: BatchEntry[]): Promise<void>;
  /** Reads a whole family in key order; resolves to the number of entries read. */
  scanFamily(family: string): Promise<number>;
  close(): Promise<void>;
}

/** The repository root (the directory holding package.json), from source or from dist/. */
export function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`package.json not found above ${__dirname}`);
    dir = up;
  }
  return dir;
}
