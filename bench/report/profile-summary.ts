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
interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
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

/** The `top` functions by self time (sample count, idle excluded) of one profile. */
export function hotFunctions(profile: CpuProfile, top = 8): HotFunction[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map<string, number>();
  let total = 0;
  for (const id of profile.samples ?? []) {
    const n = byId.get(id);
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

/** One line per profile in `dir`: the process (by `roles`, keyed by pid) and its hottest functions. */
export function summarizeProfiles(dir: string, roles: ReadonlyMap<number, string> = new Map(), top = 6): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => {
      const profile = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile;
      const hot = hotFunctions(profile, top).map((h) => `${h.name} ${h.selfPct}%`).join('; ');
      const role = roles.get(profilePid(f) ?? -1) ?? f;
      return `profile of ${role} (busy time): ${hot}`;
    });
}
