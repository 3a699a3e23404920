/**
 * Query parameters and request bodies as CouchDB takes them: booleans `true`/`false`, integers, keys
 * as JSON (`startkey="abc"`), and JSON bodies of a given shape. Each bad one is a 400 naming it.
 */
import { badRequest } from './errors';

/** A parsed query string (fastify's: a repeated parameter is an array). */
export type Query = Record<string, string | string[] | undefined>;

function single(q: Query, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) throw badRequest(`query parameter ${name} is given ${v.length} times; give it once`);
  return v;
}

/** A `true`/`false` parameter (absent: undefined). */
export function boolParam(q: Query, name: string): boolean | undefined {
  const v = single(q, name);
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw badRequest(`query parameter ${name} must be true or false, got ${JSON.stringify(v.slice(0, 80))}`);
}

/** An integer parameter from `min` to `max` (absent: undefined). */
export function intParam(q: Query, name: string, min: number, max: number): number | undefined {
  const v = single(q, name);
  if (v === undefined) return undefined;
  const n = /^-?\d{1,16}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) throw badRequest(`query parameter ${name} is ${JSON.stringify(v.slice(0, 80))}; it must be an integer from ${min} to ${max}`);
  return n;
}

/** A string parameter (absent: undefined). */
export function stringParam(q: Query, name: string): string | undefined {
  return single(q, name);
}

/** A JSON parameter (absent: undefined). */
export function jsonParam(q: Query, name: string): unknown {
  const v = single(q, name);
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw badRequest(`query parameter ${name} must be JSON (a key is a JSON string: ${name}="abc"), got ${JSON.stringify(v.slice(0, 80))}`);
  }
}

/** A document id given as JSON (`startkey="abc"`), under either of its names (absent: undefined). */
export function keyParam(q: Query, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = jsonParam(q, name);
    if (v === undefined) continue;
    if (typeof v !== 'string') throw badRequest(`query parameter ${name} must be a JSON string (document ids are strings), got ${JSON.stringify(v)?.slice(0, 80)}`);
    return v;
  }
  return undefined;
}

/** The request body as a JSON object. */
export function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (body === undefined) throw badRequest(`${what} needs a JSON body`);
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw badRequest(`the body of ${what} must be a JSON object, got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`);
  return body as Record<string, unknown>;
}

/** Member `name` of a body as an array. */
export function arrayMember(body: Record<string, unknown>, name: string, what: string): unknown[] {
  const v = body[name];
  if (!Array.isArray(v)) throw badRequest(`the body of ${what} must have "${name}", an array; got ${v === undefined ? 'none' : typeof v}`);
  return v;
}
