/** Options shared by the manager and the factory. */
import type { ClientTlsOptions } from '../proto/runtime/tls';
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
}

/** Options of {@link KeyValueTableFactory}. */
export interface KeyValueTableFactoryOptions extends ClientOptions {
  /** Batching of concurrent operations per segment store. @default { maxInFlight: 2, maxSubRequests: 512, maxBytes: 16 MiB, splitBytes: 32 KiB, streams: true } */
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
