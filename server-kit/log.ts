/**
 * JSON-lines logging for the server processes (the client library logs nothing unless given a
 * logger). Each line: `{"ts":…,"level":…,"component":…,"msg":<constant>, …fields}`.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Field names whose values are never written (tokens, keys, passwords). */
const SECRET_FIELD = /token|secret|password|authorization|key$/i;

function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) out[k] = { name: v.name, message: v.message, code: (v as { code?: unknown }).code };
    else if (SECRET_FIELD.test(k) && typeof v === 'string' && v !== '') out[k] = '[redacted]';
    else out[k] = v;
  }
  return out;
}

/** A logger writing JSON lines to `out` (default stdout) at `level` and above. */
export function jsonLogger(component: string, level: LogLevel = 'info', out: (line: string) => void = (line) => process.stdout.write(line + '\n'), base: Record<string, unknown> = {}): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const record = { ts: new Date().toISOString(), level: lvl, component, msg, ...base, ...(fields ? redact(fields) : {}) };
    out(JSON.stringify(record, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => jsonLogger(component, level, out, { ...base, ...redact(fields) }),
  };
}

/** How often a warning that callers can trigger at will may reach the log. */
export interface LogRateLimit {
  /** Lines logged per key in one interval; the ones past it are only counted. */
  perInterval: number;
  intervalMs: number;
}

/** Five lines per key every 10 s. */
export const DEFAULT_LOG_RATE_LIMIT: LogRateLimit = { perInterval: 5, intervalMs: 10_000 };

/** A warning written through {@link rateLimitedWarning}. */
export interface RateLimitedWarning {
  (fields: Record<string, unknown>): void;
  /** Ends every open interval now, writing its `more suppressed` line if it has one (a server stopping). */
  flush(): void;
}

/**
 * A warning that callers can trigger at will (a refused call), so that a misbehaving client cannot
 * flood the log: it is written through `log` at most `perInterval` times per key (its field
 * `keyField`, e.g. an error code) in an interval that starts with the key's first line; the lines
 * past that are counted, and when the interval ends one line `<msg>: more suppressed` gives their
 * number (`suppressed`). The timer of an interval does not keep the process alive, so a server calls
 * `flush` as it stops, before its last line.
 */
export function rateLimitedWarning(log: Logger, msg: string, keyField: string, limit: LogRateLimit = DEFAULT_LOG_RATE_LIMIT): RateLimitedWarning {
  const intervals = new Map<string, { logged: number; suppressed: number; timer: NodeJS.Timeout }>();
  const end = (key: string): void => {
    const interval = intervals.get(key);
    if (!interval) return;
    clearTimeout(interval.timer);
    intervals.delete(key);
    if (interval.suppressed > 0) log.warn(`${msg}: more suppressed`, { [keyField]: key, suppressed: interval.suppressed, intervalMs: limit.intervalMs });
  };
  const warn = (fields: Record<string, unknown>): void => {
    const key = String(fields[keyField]);
    let interval = intervals.get(key);
    if (!interval) {
      interval = { logged: 0, suppressed: 0, timer: setTimeout(() => end(key), limit.intervalMs).unref() };
      intervals.set(key, interval);
    }
    if (interval.logged < limit.perInterval) {
      interval.logged++;
      log.warn(msg, fields);
    } else interval.suppressed++;
  };
  return Object.assign(warn, { flush: () => [...intervals.keys()].forEach(end) });
}

/** A logger that drops everything (tests, embedded servers). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
