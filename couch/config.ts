/**
 * Configuration of `kvt couch`, the CouchDB replication endpoint: flags override `KVT_COUCH_*`
 * environment variables, which override the defaults below.
 */
import { OptionSpec, UsageError } from '../server-kit/flags';
import type { LogLevel } from '../server-kit/log';
import { parseServerOptions } from '../server-kit/server-options';
import { MAX_PARTITION_COUNT, MIN_PARTITION_COUNT, NAME_PATTERN } from '../client';

/** Effective settings of a CouchDB endpoint. */
export interface CouchConfig {
  /** Address to bind. @default '127.0.0.1' */
  host: string;
  /** Port to bind; 0 = ephemeral. @default 5984 */
  port: number;
  /** The kvt controller, `host:port`. @default '127.0.0.1:9090' */
  controller: string;
  /** The scope whose key-value tables are the databases (created at start when missing). @default 'couch' */
  scope: string;
  /** Partitions of a table created by `PUT /{db}` without `?q=`. @default 4 */
  partitions: number;
  /** Deadline of each call to the cluster, retries included. @default 30000 */
  timeoutMs: number;
  /** The largest request body accepted. @default 67108864 (64 MiB) */
  maxBodyBytes: number;
  /** @default 'info' */
  logLevel: LogLevel;
  /** PEM certificate to serve HTTPS with (needs `tlsKey`); plain HTTP without. */
  tlsCert?: string;
  /** PEM private key of `tlsCert`. */
  tlsKey?: string;
  /** PEM CA trusted for the calls to the cluster (TLS is used for them whenever this is set or `tlsCert` is). */
  tlsCa?: string;
  /** The cluster's data token: HTTP callers must present it (or the admin token); sent on data calls. */
  dataToken?: string;
  /** The cluster's admin token: sent to create and delete tables; HTTP callers need it for `PUT` and `DELETE /{db}`. */
  adminToken?: string;
}

/** Environment prefix of the endpoint's variables. */
export const COUCH_ENV_PREFIX = 'KVT_COUCH';

/** The largest request body that may be configured (1 GiB). */
const MAX_BODY_LIMIT = 1024 * 1024 * 1024;

/** The endpoint's options, as `--help` shows them. */
export const COUCH_OPTIONS: readonly OptionSpec[] = [
  { flag: 'port', env: 'PORT', kind: 'int', default: 5984, min: 0, max: 65535, description: 'HTTP port to listen on (0 = ephemeral)' },
  { flag: 'host', env: 'HOST', kind: 'string', default: '127.0.0.1', description: 'address to bind' },
  { flag: 'controller', env: 'CONTROLLER', kind: 'string', default: '127.0.0.1:9090', description: 'controller address host:port' },
  { flag: 'scope', env: 'SCOPE', kind: 'string', default: 'couch', description: 'scope whose tables are the databases (created when missing)' },
  {
    flag: 'partitions',
    env: 'PARTITIONS',
    kind: 'int',
    default: 4,
    min: MIN_PARTITION_COUNT,
    max: MAX_PARTITION_COUNT,
    description: 'partitions of a database created without ?q=',
  },
  { flag: 'timeout-ms', env: 'TIMEOUT_MS', kind: 'int', default: 30_000, min: 100, max: 600_000, description: 'deadline of each call to the cluster, retries included' },
  { flag: 'max-body-bytes', env: 'MAX_BODY_BYTES', kind: 'int', default: 64 * 1024 * 1024, min: 1024, max: MAX_BODY_LIMIT, description: 'largest request body accepted' },
  { flag: 'log-level', env: 'LOG_LEVEL', kind: 'string', default: 'info', description: 'debug | info | warn | error' },
  { flag: 'tls-cert', env: 'TLS_CERT', kind: 'string', description: 'PEM certificate file: serve HTTPS (needs --tls-key)' },
  { flag: 'tls-key', env: 'TLS_KEY', kind: 'string', description: 'PEM private key file of --tls-cert' },
  { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: 'PEM CA file trusted for calls to the cluster (TLS)' },
  { flag: 'data-token', env: 'DATA_TOKEN', kind: 'string', emptyEnvRefused: true, description: "the cluster's data token, required from HTTP callers (prefer the env variable)" },
  { flag: 'admin-token', env: 'ADMIN_TOKEN', kind: 'string', emptyEnvRefused: true, description: "the cluster's admin token, for creating and deleting databases (prefer the env variable)" },
];

/**
 * Builds the effective config from `argv` (flags only) over `env`.
 * @throws UsageError for an unknown flag, a bad value or an inconsistent combination.
 */
export function loadCouchConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CouchConfig {
  const { options: o, logLevel, security } = parseServerOptions(COUCH_OPTIONS, argv, env, COUCH_ENV_PREFIX);
  const scope = String(o.scope);
  if (!NAME_PATTERN.test(scope)) throw new UsageError(`--scope "${scope}" is not a scope name: 1 to 250 letters, digits, "." or "-"`);
  const config: CouchConfig = {
    host: String(o.host),
    port: Number(o.port),
    controller: String(o.controller),
    scope,
    partitions: Number(o.partitions),
    timeoutMs: Number(o['timeout-ms']),
    maxBodyBytes: Number(o['max-body-bytes']),
    logLevel,
    ...security,
  };
  return config;
}
