/** The JSON-lines logger's rate-limited warnings (what a caller can trigger at will, such as a refused call). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { jsonLogger, rateLimitedWarning } from '../../../server-kit/log';

describe('rateLimitedWarning', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function capture(): { lines: Record<string, unknown>[]; log: ReturnType<typeof jsonLogger> } {
    const lines: Record<string, unknown>[] = [];
    return { lines, log: jsonLogger('test', 'info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>)) };
  }

  it('logs the first lines of each key per interval, then one line saying how many more were suppressed', () => {
    const { lines, log } = capture();
    const warn = rateLimitedWarning(log, 'call rejected', 'code', { perInterval: 3, intervalMs: 1_000 });
    for (let i = 0; i < 10; i++) warn({ code: 'UNAUTHENTICATED', method: `M${i}` });
    warn({ code: 'PERMISSION_DENIED', method: 'Other' });
    expect(lines.map((l) => [l.level, l.msg, l.code, l.method])).toEqual([
      ['warn', 'call rejected', 'UNAUTHENTICATED', 'M0'],
      ['warn', 'call rejected', 'UNAUTHENTICATED', 'M1'],
      ['warn', 'call rejected', 'UNAUTHENTICATED', 'M2'],
      ['warn', 'call rejected', 'PERMISSION_DENIED', 'Other'],
    ]);
    vi.advanceTimersByTime(999);
    expect(lines).toHaveLength(4);
    vi.advanceTimersByTime(1);
    // One line for the key with lines suppressed, none for the other.
    expect(lines.slice(4)).toEqual([expect.objectContaining({ level: 'warn', msg: 'call rejected: more suppressed', code: 'UNAUTHENTICATED', suppressed: 7, intervalMs: 1_000 })]);
    // A new interval logs again.
    warn({ code: 'UNAUTHENTICATED', method: 'again' });
    expect(lines.slice(5).map((l) => [l.msg, l.method])).toEqual([['call rejected', 'again']]);
    vi.advanceTimersByTime(1_000);
    expect(lines).toHaveLength(6);
  });

  it('writes the counts of the intervals still open when flushed (a server stopping), once', () => {
    const { lines, log } = capture();
    const warn = rateLimitedWarning(log, 'call rejected', 'code', { perInterval: 1, intervalMs: 10_000 });
    for (let i = 0; i < 4; i++) warn({ code: 'UNAUTHENTICATED' });
    warn({ code: 'PERMISSION_DENIED' });
    expect(lines).toHaveLength(2);
    // Before: nothing until the interval ended, and a process exiting first lost the count.
    warn.flush();
    expect(lines.slice(2)).toEqual([expect.objectContaining({ msg: 'call rejected: more suppressed', code: 'UNAUTHENTICATED', suppressed: 3 })]);
    vi.advanceTimersByTime(10_000);
    warn.flush();
    expect(lines).toHaveLength(3);
    // A new interval after the flush.
    warn({ code: 'UNAUTHENTICATED' });
    expect(lines).toHaveLength(4);
  });
});
