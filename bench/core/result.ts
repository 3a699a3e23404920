/**
 * The shapes a run produces and the JSON file keeps; the report is computed from these alone.
 */
import { LatencySummary } from './latency';
import type { PeerName } from '../peers/peer';

/** What one peer measured on one case. */
export interface PeerMeasurement {
  ops: number;
  /** Operations per second (an operation is one call: a put, a get, an RMW, a batch, a scan). */
  opsPerSec: number;
  /** Units per second: entries for W4/W5, successful RMWs for W3, otherwise = opsPerSec. */
  unitsPerSec: number;
  latency: LatencySummary;
  /**
   * Server CPU-seconds of the peer's rounds, each until its servers were idle again (deferred work
   * included; bench/measure.ts); for the in-process raw LevelDB, the benchmark process over its
   * windows. Null when /proc was unreadable.
   */
  cpuSeconds: number | null;
  /** Server CPU-seconds per operation completed in those rounds (warm-ups included). */
  cpuPerOp: number | null;
  errors: number;
  firstError?: string;
  /** Workload-specific counters (W3: successes, retries, givenUp). */
  extra?: Record<string, number>;
}

/** A peer that could not be measured, and why. */
export interface MissingMeasurement {
  missing: string;
}

/** One case (a workload at one setting) across all peers. */
export interface CaseResult {
  id: string;
  workload: string;
  title: string;
  /** What unitsPerSec counts. */
  unit: string;
  peers: Partial<Record<PeerName, PeerMeasurement | MissingMeasurement>>;
}

/** A whole run as written to bench/results/<timestamp>.json. */
export interface BenchRun {
  startedAt: string;
  mode: 'quick' | 'full';
  durationSec: number;
  machine: { cpus: number; node: string; platform: string; etcd?: string };
  settings: Record<string, number | string | boolean>;
  cases: CaseResult[];
  notes: string[];
}

/** True when the peer produced a measurement. */
export function isMeasured(m: PeerMeasurement | MissingMeasurement | undefined): m is PeerMeasurement {
  return m !== undefined && !('missing' in m);
}
