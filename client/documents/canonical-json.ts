/**
 * Document bodies in canonical JSON: object members sorted by key (UTF-16 code units), no whitespace,
 * numbers and strings as JSON.stringify writes them — the form of RFC 8785 (JCS). A body is stored
 * and hashed in this form, so one edit has one rev and one stored text on every replica; a body
 * reads back with its members in key order.
 */
import { InvalidArgumentError } from '../errors';

/** How deep a body may nest objects and arrays. */
export const MAX_BODY_DEPTH = 128;

/** A document body: a JSON object whose top-level members do not start with `_`. */
export type DocumentBody = Record<string, unknown>;

/**
 * The canonical JSON of a document body; `what` names it in errors (`body of document "x"`).
 * @throws InvalidArgumentError when the body is not an object, a member starts with `_`, or a value is not JSON.
 */
export function canonicalBody(body: unknown, what: string): string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidArgumentError(`${what} must be a JSON object, got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`);
  }
  for (const key of Object.keys(body)) {
    if (key.startsWith('_')) throw new InvalidArgumentError(`${what} has the member "${key}": members starting with "_" are reserved`);
  }
  return canonicalJson(body, what);
}

/** The canonical JSON of any JSON value. @throws InvalidArgumentError for a value JSON cannot hold. */
export function canonicalJson(value: unknown, what: string): string {
  const out: string[] = [];
  write(value, out, what, '', 0);
  return out.join('');
}

function write(value: unknown, out: string[], what: string, path: string, depth: number): void {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON('');
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidArgumentError(`${what}: ${path || 'the value'} is ${value}; JSON numbers must be finite`);
      out.push(JSON.stringify(value));
      return;
    case 'object':
      if (value === null) out.push('null');
      else if (depth >= MAX_BODY_DEPTH) throw new InvalidArgumentError(`${what} nests deeper than ${MAX_BODY_DEPTH} levels at ${path}`);
      else if (Array.isArray(value)) writeArray(value, out, what, path, depth);
      else writeObject(value as Record<string, unknown>, out, what, path, depth);
      return;
    default:
      throw new InvalidArgumentError(`${what}: ${path || 'the value'} is a ${typeof value}, which JSON cannot hold`);
  }
}

function writeArray(items: unknown[], out: string[], what: string, path: string, depth: number): void {
  out.push('[');
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out.push(',');
    // As JSON.stringify: an undefined item is null.
    write(items[i] === undefined ? null : items[i], out, what, `${path}[${i}]`, depth + 1);
  }
  out.push(']');
}

function writeObject(o: Record<string, unknown>, out: string[], what: string, path: string, depth: number): void {
  out.push('{');
  let first = true;
  for (const key of Object.keys(o).sort()) {
    const member = o[key];
    // As JSON.stringify: an undefined member is left out.
    if (member === undefined) continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    write(member, out, what, path ? `${path}.${key}` : key, depth + 1);
  }
  out.push('}');
}
