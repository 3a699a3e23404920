/**
 * Configuration of the controller process: flags override `KVT_CONTROLLER_*` environment variables,
 * which override the defaults below.
 */
import { checkDistinctPorts, OptionSpec, UsageError } from '../server-kit/flags';
import type { LogLevel } from '../server-kit/log';
import { parseServerOptions } from '../server-kit/server-options';

/** Effective settings of a controller. */
export interface ControllerConfig {
  /** Address to bind. @default '127.0.0.1' */
  host: string;
  /** Port to bind; 0 = ephemeral. @default 9090 */
  port: number;
  /** Directory of the controller's LevelDB. @default './data/controller' */
  dataDir: string;
  /** How often segment stores are asked to heartbeat. @default 1000 */
  heartbeatIntervalMs: number;
  /** A store whose last heartbeat is older than this is dead; also the grace after a restart. @default 5000 */
  storeTimeoutMs: number;
  /** How long CreateTable / DeleteTable wait for a live store or retry unreachable stores. @default 10000 */
  createWaitMs: number;
  /** How often the resumer looks for tables left CREATING or DELETING. @default 2000 */
  resumeIntervalMs: number;
  /** Deadline of each call to a segment store. @default 5000 */
  storeCallTimeoutMs: number;
  /** @default 'info' */
  logLevel: LogLevel;
  /** PEM certificate to serve TLS with (needs `tlsKey`); plaintext without. */
  tlsCert?: string;
  /** PEM private key of `tlsCert`. */
  tlsKey?: string;
  /** PEM CA trusted for the calls to segment stores (TLS is used for them whenever this is set or `tlsCert` is). */
  tlsCa?: string;
  /** Token accepted on data and read calls (needs `adminToken`). */
  dataToken?: string;
  /** Token required on admin calls and accepted on every call; also sent to the segment stores. */
  adminToken?: string;
  /** Port of the Prometheus endpoint (`/metrics` on `host`); 0 = ephemeral; undefined = none. */
  metricsPort?: number;
  /** Port of the read-only status page (`/`, and its data at `/api/status`, on `host`); 0 = ephemeral; undefined = none. */
  httpPort?: number;
  /**
   * TEST ONLY (env `KVT_CONTROLLER_TEST_PAUSE_AFTER_SEGMENT_MS`, no flag): pause after each segment
   * created or deleted, one segment at a time, so a crash test can kill the controller midway.
   * @default 0
   */
  testPauseAfterSegmentMs: number;
}

/** Environment prefix of the controller's variables. */
export const CONTROLLER_ENV_PREFIX = 'KVT_CONTROLLER';

/** The controller's options, as `--help` shows them. */
export const CONTROLLER_OPTIONS: readonly OptionSpec[] = [
  { flag: 'port', env: 'PORT', kind: 'int', default: 9090, min: 0, max: 65535, description: 'port to listen on (0 = ephemeral)' },
  { flag: 'host', env: 'HOST', kind: 'string', default: '127.0.0.1', description: 'address to bind' },
  { flag: 'data-dir', env: 'DATA_DIR', kind: 'string', default: './data/controller', description: 'directory of the metadata LevelDB' },
  { flag: 'heartbeat-interval-ms', env: 'HEARTBEAT_INTERVAL_MS', kind: 'int', default: 1000, min: 50, max: 600_000, description: 'heartbeat interval given to segment stores' },
  { flag: 'store-timeout-ms', env: 'STORE_TIMEOUT_MS', kind: 'int', default: 5000, min: 100, max: 3_600_000, description: 'a store silent this long is dead' },
  { flag: 'create-wait-ms', env: 'CREATE_WAIT_MS', kind: 'int', default: 10_000, min: 0, max: 600_000, description: 'how long table create/delete wait for live stores' },
  { flag: 'resume-interval-ms', env: 'RESUME_INTERVAL_MS', kind: 'int', default: 2000, min: 50, max: 3_600_000, description: 'how often unfinished creates/deletes are resumed' },
  { flag: 'store-call-timeout-ms', env: 'STORE_CALL_TIMEOUT_MS', kind: 'int', default: 5000, min: 100, max: 600_000, description: 'deadline of each call to a segment store' },
  { flag: 'log-level', env: 'LOG_LEVEL', kind: 'string', default: 'info', description: 'debug | info | warn | error' },
  { flag: 'tls-cert', env: 'TLS_CERT', kind: 'string', description: 'PEM certificate file: serve TLS (needs --tls-key)' },
  { flag: 'tls-key', env: 'TLS_KEY', kind: 'string', description: 'PEM private key file of --tls-cert' },
  { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: 'PEM CA file trusted for calls to segment stores (TLS)' },
  { flag: 'data-token', env: 'DATA_TOKEN', kind: 'string', emptyEnvRefused: true, description: 'bearer token for data/read calls (prefer the env variable)' },
  { flag: 'admin-token', env: 'ADMIN_TOKEN', kind: 'string', emptyEnvRefused: true, description: 'bearer token for every call, required on admin calls' },
  { flag: 'metrics-port', env: 'METRICS_PORT', kind: 'int', min: 0, max: 65535, description: 'serve Prometheus metrics at /metrics on this port (0 = ephemeral; off unless given)' },
  { flag: 'http-port', env: 'HTTP_PORT', kind: 'int', min: 0, max: 65535, description: 'serve the read-only status page on this port (0 = ephemeral; off unless given)' },
];

const TEST_PAUSE_ENV = `${CONTROLLER_ENV_PREFIX}_TEST_PAUSE_AFTER_SEGMENT_MS`;

/** The defaults, as a config. */
export function defaultControllerConfig(): ControllerConfig {
  return loadConfig([], {});
}

/**
 * Builds the effective config from `argv` (flags only) over `env`.
 * @throws UsageError for an unknown flag, a bad value or an inconsistent combination.
 */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  const { options: o, logLevel, security } = parseServerOptions(CONTROLLER_OPTIONS, argv, env, CONTROLLER_ENV_PREFIX);
  const config: ControllerConfig = {
    host: String(o.host),
    port: Number(o.port),
    dataDir: String(o['data-dir']),
    heartbeatIntervalMs: Number(o['heartbeat-interval-ms']),
    storeTimeoutMs: Number(o['store-timeout-ms']),
    createWaitMs: Number(o['create-wait-ms']),
    resumeIntervalMs: Number(o['resume-interval-ms']),
    storeCallTimeoutMs: Number(o['store-call-timeout-ms']),
    logLevel,
    ...security,
    metricsPort: optionalPort(o['metrics-port']),
    httpPort: optionalPort(o['http-port']),
    testPauseAfterSegmentMs: testPause(env),
  };
  checkDistinctPorts({ port: config.port, 'metrics-port': config.metricsPort, 'http-port': config.httpPort });
  if (config.storeTimeoutMs <= config.heartbeatIntervalMs) {
    throw new UsageError(`store-timeout-ms is ${config.storeTimeoutMs}; it must exceed heartbeat-interval-ms (${config.heartbeatIntervalMs}), ideally 3-5 times`);
  }
  return config;
}

function optionalPort(value: unknown): number | undefined {
  return value === undefined ? undefined : Number(value);
}

function testPause(env: NodeJS.ProcessEnv): number {
  const raw = env[TEST_PAUSE_ENV];
  if (raw === undefined || raw === '') return 0;
  if (!/^\d+$/.test(raw)) throw new UsageError(`${TEST_PAUSE_ENV} must be a non-negative integer; got "${raw}"`);
  return Number(raw);
}
