/**
 * Configuration of a segment store: flags override `KVT_SEGMENTSTORE_*` environment variables, which
 * override the defaults below.
 */
import { parseHostPort } from '../server-kit/address';
import { checkDistinctPorts, helpText, OptionSpec, UsageError } from '../server-kit/flags';
import type { LogLevel } from '../server-kit/log';
import { parseServerOptions } from '../server-kit/server-options';
import { DEFAULT_MAX_IN_FLIGHT_MB } from './service/in-flight-budget';
import { DEFAULT_CHUNK_CACHE_BYTES, DEFAULT_DIRECTORY_CACHE_BYTES, DEFAULT_LOG_APPLY_MS, DEFAULT_LOG_BYTES, DEFAULT_WRITE_BUFFER_BYTES } from './storage/segments/segment-state';

/** Effective configuration of one segment-store process. */
export interface SegmentStoreConfig {
  /** Port to listen on; 0 = ephemeral. @default 12345 */
  port: number;
  /** Address to bind. @default "127.0.0.1" */
  host: string;
  /** Directory of the store's LevelDB and STORE_ID. @default "./data/segmentstore-0" */
  dataDir: string;
  /** Controller `host:port`; undefined = standalone. */
  controller?: string;
  /** `host:port` clients and the controller reach this store on. @default host:boundPort */
  advertiseAddress?: string;
  /** @default "info" */
  logLevel: LogLevel;
  /** How often expired entries are swept; 0 = never. @default 1000 */
  expirySweepIntervalMs: number;
  /** MiB of recently written or read key-family chunks kept in memory (writes and reads of them need no LevelDB read). @default 64 */
  chunkCacheMb: number;
  /** MiB of key-family directories (the keys of a family's chunks) kept in memory. @default 16 */
  directoryCacheMb: number;
  /** MiB LevelDB buffers in memory before writing a table file (its memtable). @default 64 */
  writeBufferMb: number;
  /** Largest MiB of the durable log that flushes are written to before LevelDB gets them; 0 = no log (each flush a synced LevelDB write). @default 256 */
  durableLogMb: number;
  /** Longest ms a durable write waits before it is applied to LevelDB. @default 1000 */
  durableLogApplyMs: number;
  /** MiB of data requests held at once, store-wide; past it requests are refused OVERLOADED (see InFlightBudget). @default 256 */
  maxInFlightMb: number;
  /** First retry delay of registration while the controller is unreachable. @default 200 */
  registerRetryMinMs: number;
  /** Largest retry delay of registration. @default 5000 */
  registerRetryMaxMs: number;
  /** PEM certificate to serve TLS with (needs `tlsKey`); plaintext without. */
  tlsCert?: string;
  /** PEM private key of `tlsCert`. */
  tlsKey?: string;
  /** PEM CA trusted for the calls to the controller (TLS is used for them whenever this is set or `tlsCert` is). */
  tlsCa?: string;
  /** Token accepted on data and read calls (needs `adminToken`). */
  dataToken?: string;
  /** Token required on CreateSegment / DeleteSegment and accepted on every call; also sent to the controller. */
  adminToken?: string;
  /** Port of the Prometheus endpoint (`/metrics` on `host`); 0 = ephemeral; undefined = none. */
  metricsPort?: number;
}

/** Defaults of {@link SegmentStoreConfig}. */
export function defaultSegmentStoreConfig(): SegmentStoreConfig {
  return {
    port: 12345,
    host: '127.0.0.1',
    dataDir: './data/segmentstore-0',
    logLevel: 'info',
    expirySweepIntervalMs: 1000,
    chunkCacheMb: DEFAULT_CHUNK_CACHE_BYTES / (1024 * 1024),
    directoryCacheMb: DEFAULT_DIRECTORY_CACHE_BYTES / (1024 * 1024),
    writeBufferMb: DEFAULT_WRITE_BUFFER_BYTES / (1024 * 1024),
    durableLogMb: DEFAULT_LOG_BYTES / (1024 * 1024),
    durableLogApplyMs: DEFAULT_LOG_APPLY_MS,
    maxInFlightMb: DEFAULT_MAX_IN_FLIGHT_MB,
    registerRetryMinMs: 200,
    registerRetryMaxMs: 5000,
  };
}

const d = defaultSegmentStoreConfig();

/** The options of `kvt segmentstore`. */
export const SEGMENT_STORE_OPTIONS: readonly OptionSpec[] = [
  { flag: 'port', env: 'PORT', kind: 'int', default: d.port, min: 0, max: 65535, description: 'port to listen on (0 = ephemeral)' },
  { flag: 'host', env: 'HOST', kind: 'string', default: d.host, description: 'address to bind' },
  { flag: 'data-dir', env: 'DATA_DIR', kind: 'string', default: d.dataDir, description: 'directory of the LevelDB and STORE_ID' },
  { flag: 'controller', env: 'CONTROLLER', kind: 'string', description: 'controller host:port (omit to run standalone)' },
  { flag: 'advertise-address', env: 'ADVERTISE_ADDRESS', kind: 'string', description: 'host:port others reach this store on (default host:port bound)' },
  { flag: 'log-level', env: 'LOG_LEVEL', kind: 'string', default: d.logLevel, description: 'debug | info | warn | error' },
  {
    flag: 'expiry-sweep-interval-ms',
    env: 'EXPIRY_SWEEP_INTERVAL_MS',
    kind: 'int',
    default: d.expirySweepIntervalMs,
    min: 0,
    max: 86_400_000,
    description: 'how often expired entries are removed (0 = never)',
  },
  { flag: 'chunk-cache-mb', env: 'CHUNK_CACHE_MB', kind: 'int', default: d.chunkCacheMb, min: 0, max: 1_048_576, description: 'MiB of recently written or read key-family chunks kept in memory' },
  {
    flag: 'directory-cache-mb',
    env: 'DIRECTORY_CACHE_MB',
    kind: 'int',
    default: d.directoryCacheMb,
    min: 0,
    max: 1_048_576,
    description: 'MiB of key-family directories (the keys of each family’s chunks) kept in memory',
  },
  {
    flag: 'write-buffer-mb',
    env: 'WRITE_BUFFER_MB',
    kind: 'int',
    default: d.writeBufferMb,
    min: 1,
    max: 1024,
    description: 'MiB LevelDB buffers in memory (its memtable) before writing a table file',
  },
  {
    flag: 'durable-log-mb',
    env: 'DURABLE_LOG_MB',
    kind: 'int',
    default: d.durableLogMb,
    min: 0,
    max: 65_536,
    description: 'largest MiB of the durable log flushes are written to before LevelDB gets them (0 = none: each flush is a synced LevelDB write)',
  },
  {
    flag: 'durable-log-apply-ms',
    env: 'DURABLE_LOG_APPLY_MS',
    kind: 'int',
    default: d.durableLogApplyMs,
    min: 1,
    max: 60_000,
    description: 'longest ms a logged write waits before it is applied to LevelDB',
  },
  {
    flag: 'max-in-flight-mb',
    env: 'MAX_IN_FLIGHT_MB',
    kind: 'int',
    default: d.maxInFlightMb,
    min: 1,
    max: 1_048_576,
    description: 'MiB of data requests held at once; past it requests are refused OVERLOADED (clients retry)',
  },
  { flag: 'register-retry-min-ms', env: 'REGISTER_RETRY_MIN_MS', kind: 'int', default: d.registerRetryMinMs, min: 10, max: 60_000, description: 'first delay between registration attempts' },
  {
    flag: 'register-retry-max-ms',
    env: 'REGISTER_RETRY_MAX_MS',
    kind: 'int',
    default: d.registerRetryMaxMs,
    min: 10,
    max: 600_000,
    description: 'largest delay between registration attempts (a controller refusal that names when to retry is waited out)',
  },
  { flag: 'tls-cert', env: 'TLS_CERT', kind: 'string', description: 'PEM certificate file: serve TLS (needs --tls-key)' },
  { flag: 'tls-key', env: 'TLS_KEY', kind: 'string', description: 'PEM private key file of --tls-cert' },
  { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: 'PEM CA file trusted for calls to the controller (TLS)' },
  { flag: 'data-token', env: 'DATA_TOKEN', kind: 'string', emptyEnvRefused: true, description: 'bearer token for data/read calls (prefer the env variable)' },
  { flag: 'admin-token', env: 'ADMIN_TOKEN', kind: 'string', emptyEnvRefused: true, description: 'bearer token for every call, required on segment create/delete; sent to the controller' },
  { flag: 'metrics-port', env: 'METRICS_PORT', kind: 'int', min: 0, max: 65535, description: 'serve Prometheus metrics at /metrics on this port (0 = ephemeral; off unless given)' },
];

export const ENV_PREFIX = 'KVT_SEGMENTSTORE';

/** `--help` text of `kvt segmentstore`. */
export function segmentStoreHelp(): string {
  return helpText('kvt segmentstore [options]', 'Runs a segment store: table segments on one LevelDB, served over gRPC.', SEGMENT_STORE_OPTIONS, ENV_PREFIX);
}

/**
 * Parses flags over the environment into a validated config; `help` is true for `--help`.
 * @throws UsageError naming the option and what is wrong with it.
 */
export function loadConfig(argv: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): { config: SegmentStoreConfig; help: boolean } {
  const { options: o, help, logLevel, security } = parseServerOptions(SEGMENT_STORE_OPTIONS, argv, env, ENV_PREFIX);
  for (const flag of ['controller', 'advertise-address']) {
    const v = o[flag];
    if (v !== undefined && !parseHostPort(String(v))) throw new UsageError(`--${flag} must be host:port (or [ipv6]:port) with a port in 1-65535; got "${v}"`);
  }
  if (Number(o['register-retry-min-ms']) > Number(o['register-retry-max-ms'])) {
    throw new UsageError(`--register-retry-min-ms (${o['register-retry-min-ms']}) must not exceed --register-retry-max-ms (${o['register-retry-max-ms']})`);
  }
  const config: SegmentStoreConfig = {
    port: Number(o.port),
    host: String(o.host),
    dataDir: String(o['data-dir']),
    controller: o.controller === undefined ? undefined : String(o.controller),
    advertiseAddress: o['advertise-address'] === undefined ? undefined : String(o['advertise-address']),
    logLevel,
    expirySweepIntervalMs: Number(o['expiry-sweep-interval-ms']),
    chunkCacheMb: Number(o['chunk-cache-mb']),
    directoryCacheMb: Number(o['directory-cache-mb']),
    writeBufferMb: Number(o['write-buffer-mb']),
    durableLogMb: Number(o['durable-log-mb']),
    durableLogApplyMs: Number(o['durable-log-apply-ms']),
    maxInFlightMb: Number(o['max-in-flight-mb']),
    registerRetryMinMs: Number(o['register-retry-min-ms']),
    registerRetryMaxMs: Number(o['register-retry-max-ms']),
    ...security,
    metricsPort: o['metrics-port'] === undefined ? undefined : Number(o['metrics-port']),
  };
  checkDistinctPorts({ port: config.port, 'metrics-port': config.metricsPort });
  return { config, help };
}
