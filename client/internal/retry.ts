/**
 * Retry policy. Calls are retried with exponential backoff while the failure is transient
 * (UNAVAILABLE, including a passed per-attempt deadline) and the overall deadline allows. An update
 * (of any kind: an unconditional put applied twice can overwrite another client's write made in
 * between) is retried only when the request surely did not reach the server: the channel had no
 * connection, or the server refused it explicitly with a kvt UNAVAILABLE code before doing anything.
 * Otherwise its outcome is unknown and the caller gets an `UnavailableError` with `maybeApplied: true`.
 */
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER } from '../../proto/error-codes';

/** Retry settings shared by the manager and the tables. */
export interface RetryOptions {
  /** Attempts after the first one. @default 5 */
  maxRetries: number;
  /** First backoff, doubled on each retry (with jitter). @default 50 */
  initialBackoffMs: number;
  /** Cap of one backoff. @default 1000 */
  maxBackoffMs: number;
}

/** The defaults of {@link RetryOptions}. */
export function defaultRetryOptions(): RetryOptions {
  return { maxRetries: 5, initialBackoffMs: 50, maxBackoffMs: 1000 };
}

/** kvt codes of a request a server refused without running it: retried, updates too. */
const REFUSED_UNRUN: ReadonlySet<unknown> = new Set(['UNAVAILABLE', 'OVERLOADED']);

/** Whether `code` (a trailer's or a sub-response's) says the request was refused without running. */
export function isRefusedUnrun(code: unknown): boolean {
  return REFUSED_UNRUN.has(code);
}

function statusOf(err: unknown): grpc.ServiceError | undefined {
  let e: unknown = err;
  // Typed errors keep the status error as `cause`.
  for (let i = 0; i < 3 && e; i++) {
    if (typeof e === 'object' && e !== null && typeof (e as grpc.ServiceError).code === 'number' && 'metadata' in e) return e as grpc.ServiceError;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** True when `err` is a transport failure or a store/controller saying it is unavailable. */
export function isTransient(err: unknown): boolean {
  const status = statusOf(err);
  if (!status) return isRefusedUnrun((err as { code?: unknown })?.code);
  const trailer = status.metadata?.get(ERROR_CODE_TRAILER)?.[0];
  if (trailer) return isRefusedUnrun(trailer);
  return status.code === grpc.status.UNAVAILABLE || status.code === grpc.status.DEADLINE_EXCEEDED;
}

/** True when the failed request surely never reached the server's handler (safe to retry any update). */
export function surelyNotSent(err: unknown): boolean {
  const status = statusOf(err);
  if (!status) return isRefusedUnrun((err as { code?: unknown })?.code);
  if (isRefusedUnrun(status.metadata?.get(ERROR_CODE_TRAILER)?.[0])) return true;
  if (status.code !== grpc.status.UNAVAILABLE) return false;
  const details = status.details ?? '';
  return details.startsWith('No connection established') || details.startsWith('Channel closed before call started') || /ECONNREFUSED|connect ENOENT/.test(details);
}

/**
 * True when a call failed as a whole without an answer of the server's own (no kvt error code), in a
 * way that does not prove it never reached the server: a broken connection or stream, a passed
 * deadline, a transport error of any status. An update sent on such a call may have been applied.
 * Not for CANCELLED: the client cancels its calls only when closed (ObjectClosedError).
 */
export function outcomeUnknown(err: unknown): boolean {
  const status = statusOf(err);
  if (!status || status.code === grpc.status.CANCELLED) return false;
  if (status.metadata?.get(ERROR_CODE_TRAILER)?.[0]) return false;
  return !surelyNotSent(status);
}

/** The backoff before retry number `attempt` (1-based), with ±25 % jitter. */
export function backoffMs(attempt: number, options: RetryOptions): number {
  const base = Math.min(options.maxBackoffMs, options.initialBackoffMs * 2 ** (attempt - 1));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
