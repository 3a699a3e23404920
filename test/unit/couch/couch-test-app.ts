/**
 * The CouchDB endpoint's application on the in-memory catalog for unit tests: requests by
 * `app.inject` answered with status, JSON body and headers, and CouchDB's `{ error, reason }` shape
 * to compare answers with.
 */
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildCouchApp } from '../../../couch/app';
import { MemoryCatalog } from '../../../couch/catalog';
import type { CouchContext } from '../../../couch/context';

/** An answer of the endpoint. */
export interface CouchAnswer {
  status: number;
  body: unknown;
  headers: Record<string, unknown>;
}

/** The endpoint on a fresh in-memory catalog (64 KiB bodies, 4 partitions by default, uuid `u1`). */
export class CouchTestApp {
  readonly app: FastifyInstance;
  readonly context: CouchContext;

  constructor(readonly catalog = new MemoryCatalog()) {
    ({ app: this.app, context: this.context } = buildCouchApp({ catalog, defaultPartitions: 4, maxBodyBytes: 64 * 1024, uuid: 'u1' }));
  }

  /** One request, its body sent as JSON. */
  async call(method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<CouchAnswer> {
    const r = await this.app.inject({ method, url, ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
    return { status: r.statusCode, body: r.body === '' ? undefined : JSON.parse(r.body), headers: r.headers };
  }

  /** The status and body of a request (what most assertions compare). */
  async answer(method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const { status, body: answered } = await this.call(method, url, body);
    return { status, body: answered };
  }

  /** The ids a listing answers with, expecting a 200: `rows` of `_all_docs`, `results` of `_changes`. */
  async listedIds(url: string): Promise<string[]> {
    const { status, body } = await this.call('GET', url);
    expect(status).toBe(200);
    const listing = body as { rows?: { id: string }[]; results?: { id: string }[] };
    return (listing.rows ?? listing.results ?? []).map((r) => r.id);
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

/** A CouchDB error answer, its reason exact or matched. */
export function couchError(status: number, error: string, reason: string | RegExp): { status: number; body: unknown } {
  return { status, body: { error, reason: typeof reason === 'string' ? reason : expect.stringMatching(reason) } };
}
