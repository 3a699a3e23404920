/**
 * What the configs of the server processes (`kvt controller`, `kvt segmentstore`, `kvt couch`) read
 * alike: their flags over the environment with no positional argument, the log level, and the TLS
 * files and tokens, each checked.
 */
import { checkTokenFlags } from './auth';
import { OptionSpec, parseOptions, ParsedOptions, UsageError } from './flags';
import { LOG_LEVELS, LogLevel } from './log';
import { checkTlsFlags } from './tls';

/** A server's TLS files and tokens (`--tls-cert`, `--tls-key`, `--tls-ca`, `--data-token`, `--admin-token`). */
export interface ServerSecurity {
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  dataToken?: string;
  adminToken?: string;
}

/**
 * Parses a server's flags over `env` (see parseOptions); `help` is true for `--help`, and then nothing
 * else is checked.
 * @throws UsageError for a positional argument, an unknown log level, a key without its certificate (or
 *   the reverse), or tokens that are malformed, alike, or a data token without an admin token
 */
export function parseServerOptions(
  specs: readonly OptionSpec[],
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  envPrefix: string,
): { options: ParsedOptions; help: boolean; logLevel: LogLevel; security: ServerSecurity } {
  const { options, help, positionals } = parseOptions(specs, argv, env, envPrefix);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (see --help)`);
  const logLevel = String(options['log-level']) as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}; got "${logLevel}"`);
  const security: ServerSecurity = {
    tlsCert: optionalString(options['tls-cert']),
    tlsKey: optionalString(options['tls-key']),
    tlsCa: optionalString(options['tls-ca']),
    dataToken: optionalString(options['data-token']),
    adminToken: optionalString(options['admin-token']),
  };
  checkTlsFlags({ certFile: security.tlsCert, keyFile: security.tlsKey, caFile: security.tlsCa });
  checkTokenFlags(security);
  return { options, help, logLevel, security };
}

/** An option given as a string, or undefined when not given. */
function optionalString(value: unknown): string | undefined {
  return value === undefined ? undefined : String(value);
}
