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
export function jsonLogger(
  component: string,
  level: LogLevel = 'info',
  out: (line: string) => void = (line) => process.stdout.write(line + '\n'),
  base: Record<string, unknown> = {},
): Logger {
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

/** A logger that drops everything (tests, embedded servers). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
