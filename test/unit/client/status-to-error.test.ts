import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  BadKeyVersionError,
  InvalidArgumentError,
  NoSuchKeyError,
  ObjectClosedError,
  OverloadedError,
  ScopeNotFoundError,
  SegmentStoreHoldsDataError,
  SegmentStoreLiveError,
  SegmentStoreNotFoundError,
  SegmentStoreRemovedError,
  ServiceError,
  TableNotActiveError,
  TableNotFoundError,
  UnavailableError,
} from '../../../client';
import { isTransient, surelyNotSent } from '../../../client/internal/retry';
import { toKvtError } from '../../../client/internal/status-to-error';

function statusError(code: grpc.status, details: string, trailers: Record<string, string> = {}): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(trailers)) metadata.set(k, v);
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

describe('toKvtError', () => {
  it.each([
    ['BAD_KEY_VERSION', BadKeyVersionError],
    ['NO_SUCH_KEY', NoSuchKeyError],
    ['INVALID_ARGUMENT', InvalidArgumentError],
    ['SCOPE_NOT_FOUND', ScopeNotFoundError],
    ['TABLE_NOT_FOUND', TableNotFoundError],
    ['TABLE_NOT_ACTIVE', TableNotActiveError],
    ['SEGMENT_STORE_NOT_FOUND', SegmentStoreNotFoundError],
    ['SEGMENT_STORE_LIVE', SegmentStoreLiveError],
    ['SEGMENT_STORE_HOLDS_DATA', SegmentStoreHoldsDataError],
    ['SEGMENT_STORE_REMOVED', SegmentStoreRemovedError],
    ['UNAVAILABLE', UnavailableError],
    ['OVERLOADED', OverloadedError],
    ['INTERNAL', ServiceError],
  ] as const)('maps the trailer code %s to its class, keeping the status as cause', (code, Ctor) => {
    const status = statusError(grpc.status.FAILED_PRECONDITION, 'it failed', { 'kvt-error-code': code });
    const err = toKvtError(status, { table: 's/t' });
    expect(err).toBeInstanceOf(Ctor);
    expect(err.code).toBe(code);
    expect(err.message).toBe('it failed');
    expect(err.cause).toBe(status);
    expect(err.table).toBe('s/t');
  });

  it('tidies grpc-js\'s own connection failures: no empty "Resolution note:", no doubled "Error:"', () => {
    const details = 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:19190. Resolution note: ';
    const err = toKvtError(statusError(grpc.status.UNAVAILABLE, details));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toBe('No connection established. Last error: connect ECONNREFUSED 127.0.0.1:19190.');
    const noted = toKvtError(statusError(grpc.status.UNAVAILABLE, 'Name resolution failed for target dns:nowhere:1. Resolution note: DNS lookup failed'));
    expect(noted.message).toBe('Name resolution failed for target dns:nowhere:1. Resolution note: DNS lookup failed');
  });

  it('names the failing key from the index trailer', () => {
    const status = statusError(grpc.status.FAILED_PRECONDITION, 'version mismatch', { 'kvt-error-code': 'BAD_KEY_VERSION', 'kvt-error-index': '1' });
    const err = toKvtError(status, { table: 's/t', keyAt: (i) => ['a', 'b'][i] });
    expect([err.index, err.key]).toEqual([1, 'b']);
    expect(err.message).toBe('version mismatch (key "b" of table s/t)');
  });

  it('maps an Execute sub-response error the same way', () => {
    const wire = { code: 'NO_SUCH_KEY', message: 'no such key', index: 0, segmentId: '12' };
    const err = toKvtError(wire, { keyAt: () => new Uint8Array([1, 255]) });
    expect(err).toBeInstanceOf(NoSuchKeyError);
    expect([err.segment, err.index, err.message]).toEqual(['12', 0, 'no such key (key 0x01ff)']);
    expect(err.cause).toBe(wire);
  });

  it('maps transport failures without a trailer', () => {
    expect(toKvtError(statusError(grpc.status.UNAVAILABLE, 'No connection established'))).toBeInstanceOf(UnavailableError);
    expect(toKvtError(statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'))).toBeInstanceOf(UnavailableError);
    expect(toKvtError(statusError(grpc.status.CANCELLED, 'Cancelled on client'))).toBeInstanceOf(ObjectClosedError);
    const unknown = toKvtError(statusError(grpc.status.DATA_LOSS, 'odd'));
    expect([unknown.constructor, unknown.code]).toEqual([ServiceError, 'SERVICE_ERROR']);
  });

  it('marks an unavailable update whose outcome is unknown', () => {
    const err = toKvtError(statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'), { maybeApplied: true }) as UnavailableError;
    expect(err.maybeApplied).toBe(true);
  });

  it('wraps non-gRPC failures in ServiceError and passes KvtErrors through', () => {
    const err = toKvtError(new TypeError('boom'));
    expect([err.constructor, err.code, err.message]).toEqual([ServiceError, 'SERVICE_ERROR', 'unexpected failure: boom']);
    const same = new InvalidArgumentError('x');
    expect(toKvtError(same)).toBe(same);
  });
});

describe('retry classification', () => {
  it('retries any update when the request surely was not sent', () => {
    const refused = statusError(grpc.status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1');
    expect([isTransient(refused), surelyNotSent(refused)]).toEqual([true, true]);
    const stopping = statusError(grpc.status.UNAVAILABLE, 'store is stopping', { 'kvt-error-code': 'UNAVAILABLE' });
    expect([isTransient(stopping), surelyNotSent(stopping)]).toEqual([true, true]);
  });

  it('treats a dropped connection or a passed deadline as maybe applied', () => {
    const dropped = statusError(grpc.status.UNAVAILABLE, 'Connection dropped');
    expect([isTransient(dropped), surelyNotSent(dropped)]).toEqual([true, false]);
    const late = statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    expect([isTransient(late), surelyNotSent(late)]).toEqual([true, false]);
  });

  it('never retries a domain error', () => {
    const bad = statusError(grpc.status.FAILED_PRECONDITION, 'mismatch', { 'kvt-error-code': 'BAD_KEY_VERSION' });
    expect(isTransient(bad)).toBe(false);
  });
});
