/**
 * Bearer tokens on the wire: the metadata key that carries `Bearer <token>`, which tokens can travel
 * as an HTTP/2 header value, and the grpc-js client option that sends one with every call (clients
 * and the servers' own outgoing calls). Servers check them in server-kit/auth.ts.
 */
import * as grpc from '@grpc/grpc-js';

/** The metadata key carrying `Bearer <token>`. */
export const AUTHORIZATION_METADATA = 'authorization';

/** Tokens travel as HTTP/2 header values: visible ASCII only, and bounded. */
const TOKEN_PATTERN = /^[\x21-\x7e]{1,4096}$/;

/** True when `token` can be sent as a bearer token (1–4096 visible ASCII characters). */
export function isValidToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/** A client interceptor adding `authorization: Bearer <token>` to every call. */
export function bearerInterceptor(token: string): grpc.Interceptor {
  const header = `Bearer ${token}`;
  return (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(AUTHORIZATION_METADATA, header);
        next(metadata, listener);
      },
    });
}

/**
 * grpc-js client options: `base` plus, when `token` is set, the interceptor that sends it.
 * @throws Error when the token cannot be sent (see {@link isValidToken}); the message never holds it.
 */
export function withBearerToken(base: grpc.ClientOptions, token: string | undefined): grpc.ClientOptions {
  if (token === undefined) return base;
  if (!isValidToken(token)) throw new Error(`the token must be 1 to 4096 visible ASCII characters (no spaces); got ${token.length} characters`);
  return { ...base, interceptors: [bearerInterceptor(token)] };
}
