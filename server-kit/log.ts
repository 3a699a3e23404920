/**
 * JSON-lines logging for the server processes (the client library logs nothing unless given a
 * logger), written by pino behind the small {@link Logger} interface the servers use. Each line:
 * `{"level":…,"ts":…,"component":…, …fields, "msg":<constant>}`: a constant message, its details as
 * fields. Tokens, passwords and TLS keys are censored by pino's redaction ({@link REDACTED_PATHS}).
 */
import pino from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The levels `--log-level` takes, quietest last. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** What a censored value reads as. */
export const REDACTED = '[redacted]';

/** Field names whose values are never written: tokens, passwords, TLS private keys. */
const SECRET_FIELDS = ['token', 'dataToken', 'adminToken', 'authorization', 'password', 'secret', 'tlsKey', 'privateKey', 'key'];

/**
 * The paths pino's redaction censors: each secret field at the top of a line, and one level down
 * (a config or request object logged as one field).
 */
export const REDACTED_PATHS: readonly string[] = [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)];

/** An Error as the fields a reader needs (its stack stays out of the log line); a bigint as its digits. */
function plain(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, code: (value as { code?: unknown }).code };
  if (typeof value === 'bigint') return value.toString();
  return value;
}

function plainFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = plain(v);
  return out;
}

/** The Logger interface over a pino logger. */
function wrap(base: pino.Logger): Logger {
  const write = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (!base.isLevelEnabled(level)) return;
    if (fields) base[level](plainFields(fields), msg);
    else base[level](msg);
  };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (fields) => wrap(base.child(plainFields(fields))),
  };
}

/**
 * A logger writing JSON lines to `out` (default: stdout, synchronously, so that the last line before
 * an exit is not lost) at `level` and above; `base` fields go on every line.
 */
export function jsonLogger(component: string, level: LogLevel = 'info', out?: (line: string) => void, base: Record<string, unknown> = {}): Logger {
  const destination = out ? { write: (line: string) => out(line.endsWith('\n') ? line.slice(0, -1) : line) } : pino.destination({ dest: 1, sync: true });
  const logger = pino(
    {
      level,
      messageKey: 'msg',
      base: { component, ...plainFields(base) },
      timestamp: () => `,"ts":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      // Errors are made plain above (name, message, code); pino's own `err` serializer would add the stack.
      serializers: { err: (value: unknown) => value },
      redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
    },
    destination,
  );
  return wrap(logger);
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
