/**
 * CouchDB's error answers: a status and `{ "error": <kind>, "reason": <text> }`. Every failure of the
 * endpoint becomes one here, in one place: a {@link CouchError} thrown by a route as it is, a kvt
 * error by its class (bad input 400, a conflict 409, a missing table 404, an unreachable store 503),
 * fastify's own (an oversize body 413) by its status, and anything else 500.
 */
import {
  DocumentConflictError,
  InvalidArgumentError,
  KvtError,
  ObjectClosedError,
  PermissionDeniedError,
  ScopeNotFoundError,
  TableNotActiveError,
  TableNotFoundError,
  UnauthenticatedError,
  UnavailableError,
} from '../client';

/** A CouchDB error answer. */
export class CouchError extends Error {
  override readonly name = 'CouchError';

  constructor(
    /** HTTP status. */
    readonly status: number,
    /** CouchDB's `error` member: `bad_request`, `not_found`, `conflict`, … */
    readonly error: string,
    /** CouchDB's `reason` member: what went wrong, naming the field. */
    readonly reason: string,
  ) {
    super(reason);
  }

  /** The JSON body. */
  toJSON(): { error: string; reason: string } {
    return { error: this.error, reason: this.reason };
  }
}

/** 400 `bad_request`. */
export const badRequest = (reason: string): CouchError => new CouchError(400, 'bad_request', reason);

/** 404 `not_found`. */
export const notFound = (reason: string): CouchError => new CouchError(404, 'not_found', reason);

/** The 404 of a database that does not exist. */
export const noDatabase = (db: string): CouchError => notFound(`Database does not exist: ${db}`);

/** 415: attachments are not stored by this endpoint. */
export const attachmentsRefused = (what: string): CouchError =>
  new CouchError(415, 'attachments_unsupported', `${what}: kvt's CouchDB endpoint does not store attachments (documents with _attachments and attachment URLs are refused)`);

/** Fastify's errors carry a status code (and a code such as FST_ERR_CTP_BODY_TOO_LARGE). */
interface HttpFrameworkError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/** The CouchDB answer for any failure; `maxBodyBytes` names the body limit. */
export function couchErrorOf(err: unknown, maxBodyBytes: number): CouchError {
  if (err instanceof CouchError) return err;
  if (err instanceof KvtError) return kvtErrorOf(err);
  const e = (err ?? {}) as HttpFrameworkError;
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.statusCode === 413) {
    return new CouchError(413, 'too_large', `the request body is over ${maxBodyBytes} bytes, the largest this endpoint accepts (--max-body-bytes)`);
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || e.statusCode === 415) return new CouchError(415, 'bad_content_type', e.message ?? 'unsupported content type');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return badRequest(e.message ?? 'bad request');
  return new CouchError(500, 'internal_server_error', err instanceof Error ? err.message : String(err));
}

function kvtErrorOf(err: KvtError): CouchError {
  if (err instanceof InvalidArgumentError) return badRequest(err.message);
  if (err instanceof DocumentConflictError) return new CouchError(409, 'conflict', `Document update conflict: ${err.message}`);
  if (err instanceof TableNotFoundError) return notFound(`Database does not exist: ${err.message}`);
  if (err instanceof ScopeNotFoundError) return notFound(`the scope of the databases does not exist: ${err.message}`);
  if (err instanceof TableNotActiveError) return new CouchError(503, 'service_unavailable', `the database is being created or deleted: ${err.message}`);
  if (err instanceof UnauthenticatedError) return new CouchError(500, 'internal_server_error', `the cluster refused this endpoint's token: ${err.message}`);
  if (err instanceof PermissionDeniedError) return new CouchError(403, 'forbidden', `the cluster refused this endpoint's token: ${err.message}`);
  if (err instanceof UnavailableError || err instanceof ObjectClosedError) return new CouchError(503, 'service_unavailable', err.message);
  return new CouchError(500, 'internal_server_error', `${err.code}: ${err.message}`);
}
