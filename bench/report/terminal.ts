/**
 * The table printed at the end of a run: one line per case and peer, then the target verdicts.
 */
import { BenchRun, isMeasured } from '../core/result';
import { PEER_NAMES } from '../peers/peer';
import { TargetResult, formatNumber } from './analysis';

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

/** Renders the terminal table. */
export function renderTable(run: BenchRun, targets: TargetResult[]): string {
  const head = `${pad('case', 8)} ${pad('peer', 10)} ${pad('units/s', 11, true)} ${pad('p50 ms', 8, true)} ${pad('p99 ms', 8, true)} ${pad('CPU µs/op', 10, true)}  notes`;
  const lines = [head, '-'.repeat(head.length + 10)];
  for (const c of run.cases) {
    for (const p of PEER_NAMES) {
      const m = c.peers[p];
      if (!m) continue;
      if (!isMeasured(m)) {
        lines.push(`${pad(c.id, 8)} ${pad(p, 10)} missing: ${m.missing.slice(0, 70)}`);
        continue;
      }
      const cpu = m.cpuPerOp === null ? '—' : formatNumber(m.cpuPerOp * 1e6);
      const notes = [...(p === 'pravega' ? ['(in memory, not durable)'] : []), ...Object.entries(m.extra ?? {}).map(([k, v]) => `${k}=${v}`), ...(m.errors ? [`errors=${m.errors}`] : [])].join(' ');
      lines.push(
        `${pad(c.id, 8)} ${pad(p, 10)} ${pad(formatNumber(m.unitsPerSec), 11, true)} ${pad(formatNumber(m.latency.p50Ms), 8, true)} ` +
          `${pad(formatNumber(m.latency.p99Ms), 8, true)} ${pad(cpu, 10, true)}  ${notes}`,
      );
    }
  }
  lines.push('', 'targets:');
  for (const t of targets) lines.push(`  ${t.met === null ? '?' : t.met ? '✓' : '✗'} ${t.target.description}: ${t.verdict}`);
  return lines.join('\n');
}
