import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ServiceError, UnavailableError } from '../../../client';
import { Coalescer, defaultCoalescerOptions } from '../../../client/internal/coalescer';
import { Connections } from '../../../client/internal/connections';
import { isTransient, outcomeUnknown, surelyNotSent } from '../../../client/internal/retry';
import { RoutingCache } from '../../../client/internal/routing';
import { TableTransport } from '../../../client/internal/table-transport';
import { ERROR_CODE_TRAILER } from '../../../proto/error-codes';
import type { ClientSubResponse as SubResponse } from '../../../client/internal/wire-decoder';

/** A status error as grpc-js delivers it, with a kvt error code trailer when `kvtCode` is given. */
function statusError(code: grpc.status, details: string, kvtCode?: string): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  if (kvtCode) metadata.set(ERROR_CODE_TRAILER, kvtCode);
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

describe('the outcome of a failed call', () => {
  it('is unknown when the call broke after it may have reached the store, whatever the status', () => {
    expect(outcomeUnknown(statusError(grpc.status.UNAVAILABLE, 'Connection dropped'))).toBe(true);
    expect(outcomeUnknown(statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'))).toBe(true);
    expect(outcomeUnknown(statusError(grpc.status.RESOURCE_EXHAUSTED, 'Sent message larger than max (72828222 vs. 67108864)'))).toBe(true);
    expect(outcomeUnknown(statusError(grpc.status.INTERNAL, 'Received RST_STREAM with code 2'))).toBe(true);
  });

  it('is known when the call surely never left, when the server answered with its own code, or when the client cancelled it', () => {
    expect(outcomeUnknown(statusError(grpc.status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1'))).toBe(false);
    expect(surelyNotSent(statusError(grpc.status.UNAVAILABLE, 'No connection established'))).toBe(true);
    expect(outcomeUnknown(statusError(grpc.status.UNAVAILABLE, 'segment store is stopping', 'UNAVAILABLE'))).toBe(false);
    expect(outcomeUnknown(statusError(grpc.status.UNAVAILABLE, 'segment store is overloaded', 'OVERLOADED'))).toBe(false);
    expect(surelyNotSent(statusError(grpc.status.UNAVAILABLE, 'segment store is overloaded', 'OVERLOADED'))).toBe(true);
    expect(isTransient(statusError(grpc.status.UNAVAILABLE, 'segment store is overloaded', 'OVERLOADED'))).toBe(true);
    expect(surelyNotSent({ code: 'OVERLOADED', message: 'segment store is overloaded', index: -1, segmentId: '' })).toBe(true);
    expect(outcomeUnknown(statusError(grpc.status.INVALID_ARGUMENT, 'value is too long', 'INVALID_ARGUMENT'))).toBe(false);
    expect(outcomeUnknown(statusError(grpc.status.CANCELLED, 'Cancelled on client'))).toBe(false);
    expect(outcomeUnknown({ code: 'BAD_KEY_VERSION', message: 'stale', index: 0, segmentId: '1' })).toBe(false);
  });
});

describe('the error of an update whose call broke', () => {
  /** A transport to one segment at 127.0.0.1:1 whose every call fails with `failure` (our coalescer, its sending replaced). */
  function transportFailingWith(failure: unknown): TableTransport {
    const connections = new Connections('127.0.0.1:1');
    const coalescer = new (class extends Coalescer {
      override submit(): Promise<SubResponse> {
        return Promise.reject(failure);
      }
    })(connections, defaultCoalescerOptions());
    const routing = new RoutingCache(async () => ({
      scope: 's',
      table: 't',
      partitionCount: 1,
      generation: '1',
      partitions: [{ index: 0, hashLow: 0, hashHigh: 1, segmentId: '7', storeId: 'x', storeAddress: '127.0.0.1:1', storeLive: true }],
    }));
    return new TableTransport('s/t', 's', 't', connections, coalescer, { timeoutMs: 1000, retry: { maxRetries: 0, initialBackoffMs: 1, maxBackoffMs: 1 } }, routing);
  }
  const send = (t: TableTransport, read: boolean) =>
    t.execute(
      (r) => r.routeOf(0),
      (segmentId) => ({ get: { segmentId, keys: [] } }),
      { read },
    );

  it('is an UnavailableError with maybeApplied for a stream broken by RESOURCE_EXHAUSTED, and a ServiceError for a read', async () => {
    const broken = statusError(grpc.status.RESOURCE_EXHAUSTED, 'Sent message larger than max');
    const update = await send(transportFailingWith(broken), false).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(update).toBeInstanceOf(UnavailableError);
    expect((update as UnavailableError).maybeApplied).toBe(true);
    expect((update as UnavailableError).message).toContain('may have been applied');
    const read = await send(transportFailingWith(broken), true).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(read).toBeInstanceOf(ServiceError);
  });

  it('keeps a refusal of the store its own error, with nothing applied', async () => {
    const refused = await send(transportFailingWith(statusError(grpc.status.UNAVAILABLE, 'stopping', 'UNAVAILABLE')), false).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(UnavailableError);
    expect((refused as UnavailableError).maybeApplied).toBe(false);
  });
});
