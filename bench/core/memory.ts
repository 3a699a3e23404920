/**
 * A server process's memory and a data directory's size, read from /proc and the file system (Linux).
 * RSS is split as the kernel counts it: anonymous pages (heaps, caches, buffers: what the process
 * holds) and file pages (LevelDB's table files mapped for reading, which the kernel reclaims at will).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Resident memory of one process, in MiB. */
export interface ProcessMemory {
  rssMb: number;
  anonMb: number;
  fileMb: number;
}

function kbField(status: string, name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}

/** The resident memory of process `pid`; undefined when /proc cannot tell (not Linux, process gone). */
export function processMemory(pid: number): ProcessMemory | undefined {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const mb = (kb: number): number => Math.round((kb / 1024) * 10) / 10;
  return { rssMb: mb(kbField(status, 'VmRSS')), anonMb: mb(kbField(status, 'RssAnon')), fileMb: mb(kbField(status, 'RssFile') + kbField(status, 'RssShmem')) };
}

/** Bytes of the files under `dir` (0 when it is gone). */
export function directoryBytes(dir: string): number {
  let total = 0;
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const d of names) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) total += directoryBytes(p);
    else {
      try {
        total += fs.statSync(p).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}
