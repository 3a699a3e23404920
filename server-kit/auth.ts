/**
 * Bearer-token authentication of kvt calls: a data token and an admin token per server. The check is
 * done once per server by wrapping its handler map ({@link withAuth}); clients attach the token with
 * an interceptor (client/internal/credentials.ts). Token values never reach a log or an error message.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { AUTHORIZATION_METADATA, isValidToken } from '../proto/auth';
import { ErrorCodes } from '../proto/error-codes';
import { UsageError } from './flags';
import { guardHandlers, OnRefused } from './guard';
import { KvtFault } from './fault';

/** The tokens a server accepts; with neither set, every call is accepted. */
export interface AuthTokens {
  /** Accepted on data and read calls. */
  dataToken?: string;
  /** Accepted on every call; the only token accepted on admin calls. */
  adminToken?: string;
}

/**
 * Checks the token options of a server (never echoing a value).
 * @throws UsageError for a malformed token, a data token without an admin token, or equal tokens.
 */
export function checkTokenFlags(tokens: AuthTokens): void {
  for (const [flag, value] of [
    ['--data-token', tokens.dataToken],
    ['--admin-token', tokens.adminToken],
  ] as const) {
    if (value !== undefined && !isValidToken(value)) {
      throw new UsageError(`${flag} must be 1 to 4096 visible ASCII characters (no spaces); got ${value.length} characters`);
    }
  }
  // Without an admin token, admin calls (including the stores' own registration) could never succeed.
  if (tokens.dataToken !== undefined && tokens.adminToken === undefined) throw new UsageError('--data-token needs --admin-token');
  if (tokens.dataToken !== undefined && tokens.dataToken === tokens.adminToken) throw new UsageError('--data-token and --admin-token must differ');
}

/** True when the server requires a token on every call. */
export function authEnabled(tokens: AuthTokens): boolean {
  return tokens.adminToken !== undefined || tokens.dataToken !== undefined;
}

/** SHA-256 first, so the comparison takes the same time whatever the lengths. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function sameToken(given: Buffer, expected: Buffer | undefined): boolean {
  return expected !== undefined && timingSafeEqual(given, expected);
}

/** The bearer token of a call's metadata, or undefined when there is none. */
function bearerOf(metadata: grpc.Metadata): string | undefined {
  const value = metadata.get(AUTHORIZATION_METADATA)[0];
  if (typeof value !== 'string') return undefined;
  const match = /^Bearer +(\S+)$/i.exec(value.trim());
  return match ? match[1] : undefined;
}

/** Which token a call presented: undefined when it may proceed, else the fault to answer with. */
function verdict(method: string, metadata: grpc.Metadata, expected: { data?: Buffer; admin?: Buffer }, admin: boolean): KvtFault | undefined {
  const token = bearerOf(metadata);
  if (token === undefined) {
    return new KvtFault(ErrorCodes.UNAUTHENTICATED, `${method} needs a bearer token: send metadata "authorization: Bearer <token>"`);
  }
  const given = digest(token);
  // Both comparisons always run, so timing does not tell a data token from a wrong one.
  const isAdmin = sameToken(given, expected.admin);
  const isData = sameToken(given, expected.data);
  if (isAdmin || (isData && !admin)) return undefined;
  if (isData) return new KvtFault(ErrorCodes.PERMISSION_DENIED, `${method} needs the admin token; the data token is not enough`);
  return new KvtFault(ErrorCodes.PERMISSION_DENIED, `${method} was called with a token this server does not accept`);
}

/**
 * Wraps every handler of `handlers` (unary, or marked bidiStreaming) with the token check: a call
 * without a bearer token fails UNAUTHENTICATED, one with a wrong token (or the data token on a method
 * of `adminMethods`) PERMISSION_DENIED, each with the `kvt-error-code` trailer, and a `call rejected`
 * warning through `rejected` (servers pass a rateLimitedWarning keyed by code, and flush it as they
 * stop). Returns `handlers` unchanged when no token is configured.
 */
export function withAuth(
  handlers: grpc.UntypedServiceImplementation,
  tokens: AuthTokens,
  adminMethods: ReadonlySet<string>,
  rejected?: (fields: Record<string, unknown>) => void,
): grpc.UntypedServiceImplementation {
  if (!authEnabled(tokens)) return handlers;
  const expected = {
    data: tokens.dataToken === undefined ? undefined : digest(tokens.dataToken),
    admin: tokens.adminToken === undefined ? undefined : digest(tokens.adminToken),
  };
  const refused: OnRefused = (method, fault, peer) => rejected?.({ method, code: fault.code, peer });
  return guardHandlers(handlers, (method, metadata) => verdict(method, metadata, expected, adminMethods.has(method)), refused);
}
