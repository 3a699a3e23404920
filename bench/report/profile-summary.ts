/**
 * Summarises V8 .cpuprofile files (what `node --cpu-prof` writes) into the functions with the most
 * self time, so the report can say where a server's CPU went when a target is missed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
export interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds of the monotonic clock (process.hrtime's, in µs) when sampling began. */
  startTime?: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** A span of the monotonic clock in microseconds (`process.hrtime.bigint() / 1000n`), end exclusive. */
export interface TimeWindow {
  fromUs: number;
  toUs: number;
}

/** The monotonic clock now, in microseconds: comparable with a profile's sample times. */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** A function and its share of the samples. */
export interface HotFunction {
  name: string;
  selfPct: number;
}

function frameName(n: ProfileNode): string {
  const f = n.callFrame;
  const file = f.url ? path.basename(f.url.replace(/^file:\/\//, '')) : '';
  return `${f.functionName || '(anonymous)'}${file ? ` ${file}:${f.lineNumber + 1}` : ''}`;
}

/**
 * The `top` functions by self time (sample count, idle excluded) of one profile; with `window`, of
 * the samples taken within it only (V8 stamps samples with the same monotonic clock as
 * process.hrtime, so a window taken in one process selects the samples of another).
 */
export function hotFunctions(profile: CpuProfile, top = 8, window?: TimeWindow): HotFunction[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let at = profile.startTime ?? 0;
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    at += deltas[i] ?? 0;
    if (window && (at < window.fromUs || at >= window.toUs)) continue;
    const n = byId.get(samples[i]);
    // Idle samples say nothing about where work went; shares are of the busy samples.
    if (!n || n.callFrame.functionName === '(idle)') continue;
    const name = frameName(n);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    total++;
  }
  total ||= 1;
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, c]) => ({ name, selfPct: Math.round((c / total) * 1000) / 10 }));
}

/** The pid in a --cpu-prof file name (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile). */
export function profilePid(file: string): number | undefined {
  const m = /^CPU\.\d+\.\d+\.(\d+)\./.exec(file);
  return m ? Number(m[1]) : undefined;
}

/**
 * One line per profile in `dir`: the process (by `roles`, keyed by pid) and its hottest functions
 * (within `window` when given).
 */
export function summarizeProfiles(dir: string, roles: ReadonlyMap<number, string> = new Map(), top = 6, window?: TimeWindow): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => {
      const profile = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile;
      const hot = formatHot(hotFunctions(profile, top, window));
      const role = roles.get(profilePid(f) ?? -1) ?? f;
      return `profile of ${role} (busy time): ${hot}`;
    });
}

/** "name 12.3%; name 4.5%" */
export function formatHot(hot: readonly HotFunction[]): string {
  if (hot.length === 0) return 'no busy samples';
  return hot.map((h) => `${h.name} ${h.selfPct}%`).join('; ');
}
