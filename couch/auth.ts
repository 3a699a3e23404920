/**
 * Who may call the endpoint: the holders of the cluster's tokens, as on the gRPC services. A caller
 * sends a token as `Authorization: Bearer <token>`, or as the password of basic auth (any user name),
 * which is what CouchDB clients such as PouchDB send (`http://user:TOKEN@host:5984/db`). The data
 * token opens every call but creating and deleting databases, which take the admin token. Without
 * tokens configured every call is let in. Tokens never reach a log or an answer.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { CouchError } from './errors';

/** The tokens the endpoint accepts. */
export interface CouchTokens {
  dataToken?: string;
  adminToken?: string;
}

/** What a call needs. */
export type Access = 'open' | 'data' | 'admin';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** The token an Authorization header carries (bearer, or basic auth's password), or undefined. */
export function tokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const bearer = /^Bearer +(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** Checks callers' tokens. */
export class Authorizer {
  private readonly data?: Buffer;
  private readonly admin?: Buffer;

  constructor(tokens: CouchTokens) {
    if (tokens.dataToken !== undefined) this.data = digest(tokens.dataToken);
    if (tokens.adminToken !== undefined) this.admin = digest(tokens.adminToken);
  }

  /** True when callers must present a token. */
  get enabled(): boolean {
    return this.data !== undefined || this.admin !== undefined;
  }

  /**
   * @throws CouchError 401 `unauthorized` without a token or with a wrong one; 403 `forbidden` for
   *   the data token on a call that needs the admin token.
   */
  check(authorization: string | undefined, access: Access): void {
    if (!this.enabled || access === 'open') return;
    const token = tokenOf(authorization);
    if (token === undefined) throw new CouchError(401, 'unauthorized', 'this endpoint needs a token: send "Authorization: Bearer <token>", or the token as the password of basic auth');
    const given = digest(token);
    // Both comparisons always run, so timing does not tell a data token from a wrong one.
    const isAdmin = this.admin !== undefined && timingSafeEqual(given, this.admin);
    const isData = this.data !== undefined && timingSafeEqual(given, this.data);
    if (isAdmin || (isData && access === 'data')) return;
    if (isData) throw new CouchError(403, 'forbidden', 'creating and deleting databases needs the admin token; the data token is not enough');
    throw new CouchError(401, 'unauthorized', 'the token given is not one this endpoint accepts');
  }
}
