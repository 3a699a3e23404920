/** Options shared by the manager and the factory. */
import type { Registry } from 'prom-client';
import { MAX_MESSAGE_BYTES } from '../proto/limits';
import type { ClientTlsOptions } from './internal/credentials';
import { InvalidArgumentError } from './errors';
import { checkBoolean, refuse } from './internal/validation';
import { CoalescerOptions, defaultCoalescerOptions } from './internal/coalescer';
import { defaultRetryOptions, RetryOptions } from './internal/retry';

export type { ClientTlsOptions, CoalescerOptions, RetryOptions };

/** A logger the client may use; the client logs nothing unless given one. */
export interface KvtLogger {
  debug?(msg: string, fields?: Record<string, unknown>): void;
  warn?(msg: string, fields?: Record<string, unknown>): void;
}

/** Connection options of {@link KeyValueTableManager} and {@link KeyValueTableFactory}. */
export interface ClientOptions {
  /** The controller, `host:port`. @default '127.0.0.1:9090' */
  controller: string;
  /** Deadline of each call, retries included. @default 30000 */
  timeoutMs: number;
  /** Retries on UNAVAILABLE. @default { maxRetries: 5, initialBackoffMs: 50, maxBackoffMs: 1000 } */
  retry: RetryOptions;
  /** Optional logger; nothing is logged without one. @default undefined */
  logger?: KvtLogger;
  /**
   * TLS to the controller and the segment stores: `{ ca }` trusts that CA (PEM), `{}` the system's;
   * `cert` + `key` present a client certificate. @default undefined (plaintext)
   */
  tls?: ClientTlsOptions;
  /**
   * Bearer token sent on every call (`authorization: Bearer <token>`): the data token for tables,
   * the admin token for creating, updating and deleting scopes and tables. @default undefined
   */
  token?: string;
  /**
   * A prom-client `Registry` to count into (factories only): Execute calls and their sub-requests per
   * call (`kvt_client_execute_calls_total`, `kvt_client_operations_total`, `kvt_client_subrequests_per_call`)
   * and table operations ended in an error, by code (`kvt_client_errors_total`). @default undefined (nothing counted)
   */
  metrics?: Registry;
}

/** Options of {@link KeyValueTableFactory}. */
export interface KeyValueTableFactoryOptions extends ClientOptions {
  /** Batching of concurrent operations per segment store. Reads (gets, iterator pages) and updates coalesce apart, each with `maxInFlight` calls. @default { maxInFlight: 2, maxSubRequests: 512, maxBytes: 16 MiB, splitBytes: 32 KiB, streams: true } */
  coalescing: CoalescerOptions;
}

/** What {@link KeyValueTableFactory.withScope} takes: any options, each group (coalescing) partly. */
export type KeyValueTableFactoryInput = Partial<Omit<KeyValueTableFactoryOptions, 'coalescing'>> & { coalescing?: Partial<CoalescerOptions> };

/** The defaults of {@link ClientOptions}. */
export function defaultClientOptions(): ClientOptions {
  return { controller: '127.0.0.1:9090', timeoutMs: 30_000, retry: defaultRetryOptions() };
}

/** The defaults of {@link KeyValueTableFactoryOptions}. */
export function defaultKeyValueTableFactoryOptions(): KeyValueTableFactoryOptions {
  return { ...defaultClientOptions(), coalescing: defaultCoalescerOptions() };
}

/** Longest delay a Node timer takes (2^31 − 1 ms, ~24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Most Execute calls in flight per store and sub-requests per call the coalescer accepts. */
const MAX_IN_FLIGHT = 1024;
const MAX_SUB_REQUESTS = 100_000;

function checkInteger(field: string, value: unknown, min: number, max: number): void {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) refuse(field, value, `an integer from ${min} to ${max}`);
}

function checkMs(field: string, value: unknown, min: number): void {
  if (typeof value !== 'number' || !(value >= min && value <= MAX_TIMER_MS)) refuse(field, value, `a number of milliseconds from ${min} to ${MAX_TIMER_MS}`);
}

/**
 * Checks merged client options, so that a bad one fails where it is given, naming the option and its
 * limit, and not later as a call that never goes out (`coalescing.maxInFlight` 0) or a TypeError from
 * inside gRPC. @throws InvalidArgumentError
 */
export function checkClientOptions(o: ClientOptions): void {
  if (typeof o.controller !== 'string' || o.controller === '' || /\s/.test(o.controller)) refuse('controller', o.controller, 'a non-empty host:port without spaces');
  checkMs('timeoutMs', o.timeoutMs, 1);
  checkInteger('retry.maxRetries', o.retry.maxRetries, 0, 1000);
  checkMs('retry.initialBackoffMs', o.retry.initialBackoffMs, 0);
  const { initialBackoffMs, maxBackoffMs } = o.retry;
  if (typeof maxBackoffMs !== 'number' || !(maxBackoffMs >= initialBackoffMs && maxBackoffMs <= MAX_TIMER_MS)) {
    refuse('retry.maxBackoffMs', maxBackoffMs, `at least retry.initialBackoffMs (${initialBackoffMs}) and at most ${MAX_TIMER_MS}`);
  }
  if (o.token !== undefined && typeof o.token !== 'string') throw new InvalidArgumentError(`token is a ${typeof o.token}; it must be a string`);
  const metrics = o.metrics as Partial<Registry> | undefined;
  if (metrics !== undefined && (typeof metrics?.getSingleMetric !== 'function' || typeof metrics?.registerMetric !== 'function')) {
    throw new InvalidArgumentError(`metrics is ${metrics === null ? 'null' : `a ${typeof metrics}`} without getSingleMetric and registerMetric; it must be a prom-client Registry`);
  }
}

/** {@link checkClientOptions}, and the coalescing options of a factory. @throws InvalidArgumentError */
export function checkFactoryOptions(o: KeyValueTableFactoryOptions): void {
  checkClientOptions(o);
  const c = o.coalescing;
  checkInteger('coalescing.maxInFlight', c.maxInFlight, 1, MAX_IN_FLIGHT);
  checkInteger('coalescing.maxSubRequests', c.maxSubRequests, 1, MAX_SUB_REQUESTS);
  if (typeof c.maxBytes !== 'number' || !(c.maxBytes >= 1 && c.maxBytes <= MAX_MESSAGE_BYTES)) refuse('coalescing.maxBytes', c.maxBytes, `a number of bytes from 1 to ${MAX_MESSAGE_BYTES}`);
  if (typeof c.splitBytes !== 'number' || !(c.splitBytes >= 0)) refuse('coalescing.splitBytes', c.splitBytes, 'a number of bytes ≥ 0 (Infinity: never split)');
  checkBoolean('coalescing.streams', c.streams);
}

/** Merges partial options over the defaults (one level deep for nested option groups). */
export function mergeOptions<T extends object>(defaults: T, given: Partial<T> | undefined): T {
  const out = { ...defaults } as Record<string, unknown>;
  for (const [k, v] of Object.entries(given ?? {})) {
    if (v === undefined) continue;
    const d = out[k];
    out[k] = d && typeof d === 'object' && typeof v === 'object' && !Array.isArray(v) ? { ...d, ...v } : v;
  }
  return out as T;
}
