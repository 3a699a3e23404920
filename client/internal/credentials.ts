/**
 * What a client sends to be let in: TLS channel credentials, and the bearer token on every call (an
 * interceptor, proto/auth.ts, which the servers' own outgoing calls use too). The servers' side of
 * both is in the server kit (server-kit/tls.ts, server-kit/auth.ts).
 */
import * as grpc from '@grpc/grpc-js';
export { withBearerToken } from '../../proto/auth';

/** The TLS options of a client: PEM text or bytes. `{}` means TLS trusting the system's CAs. */
export interface ClientTlsOptions {
  /** CA certificate(s) to trust, PEM. @default the system's roots */
  ca?: Buffer | string;
  /** Client certificate (chain), PEM, for servers that ask for one; needs `key`. */
  cert?: Buffer | string;
  /** Private key of `cert`, PEM. */
  key?: Buffer | string;
}

const asBuffer = (v: Buffer | string | undefined): Buffer | null => (v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v, 'utf8'));

/**
 * Channel credentials of a client: plaintext without `tls`, TLS otherwise.
 * @throws Error when only one of `cert` / `key` is given.
 */
export function clientCredentials(tls: ClientTlsOptions | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new Error('tls.cert and tls.key must be given together');
  return grpc.credentials.createSsl(asBuffer(tls.ca), asBuffer(tls.key), asBuffer(tls.cert));
}
