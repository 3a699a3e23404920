/**
 * The retry rules of TableTransport (see its module comment): a stale segment refreshes the routing
 * once, an update that may have reached a store is never sent again, and no call is retried more than
 * retry.maxRetries times. The store is our coalescer with its sending replaced by a script; the
 * controller a routing function whose generation (and segment) moves at each call.
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ServiceError, UnavailableError } from '../../../client';
import { Coalescer, defaultCoalescerOptions } from '../../../client/internal/coalescer';
import { Connections } from '../../../client/internal/connections';
import { RoutingCache } from '../../../client/internal/routing';
import { StaleGrouping, TableTransport } from '../../../client/internal/table-transport';
import type { ClientSubRequest } from '../../../client/internal/wire-codec';
import type { ClientSubResponse as SubResponse } from '../../../client/internal/wire-decoder';
import type { Routing } from '../../../proto/messages';

/** A status error as grpc-js delivers it. */
function statusError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata: new grpc.Metadata() });
}

/** What a store answers to the sub-request for `segmentId` (its `n`th, from 1): a response, or a failure to reject with. */
type Script = (segmentId: string, n: number) => SubResponse | Error;

/** A transport of table s/t whose store follows `script`; `segments` lists the segment each sub-request went to. */
function transport(script: Script, maxRetries = 3, timeoutMs = 2_000) {
  const seen = { segments: [] as string[], routingCalls: 0 };
  const connections = new Connections('127.0.0.1:1');
  const coalescer = new (class extends Coalescer {
    override submit(_address: string, sub: ClientSubRequest): Promise<SubResponse> {
      const segmentId = (sub.get ?? sub.update)!.segmentId;
      seen.segments.push(segmentId);
      const answer = script(segmentId, seen.segments.length);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    }
  })(connections, { ...defaultCoalescerOptions(), streams: false });
  // Generation n routes the one partition to segment n0; each answer comes a turn of the event loop later.
  const routing = new RoutingCache(async (): Promise<Routing> => {
    await new Promise((resolve) => setImmediate(resolve));
    const n = ++seen.routingCalls;
    return {
      scope: 's',
      table: 't',
      partitionCount: 1,
      generation: String(n),
      partitions: [{ index: 0, hashLow: 0, hashHigh: 1, segmentId: `${n}0`, storeId: 'a', storeAddress: '127.0.0.1:1', storeLive: true }],
    };
  });
  const settings = { timeoutMs, retry: { maxRetries, initialBackoffMs: 1, maxBackoffMs: 1 } };
  return { seen, transport: new TableTransport('s/t', 's', 't', connections, coalescer, settings, routing) };
}

const FOUND: SubResponse = { get: { entries: [] } } as unknown as SubResponse;
const segmentNotFound = (segmentId: string): SubResponse => ({ error: { code: 'SEGMENT_NOT_FOUND', message: `segment ${segmentId} does not exist`, index: -1, segmentId } }) as SubResponse;

const read = (t: TableTransport) =>
  t.execute(
    (r) => r.routeOf(0),
    (segmentId) => ({ get: { segmentId, keys: [] } }),
    { read: true },
  );
// To the transport an update is a request without the read policy: what it carries does not matter here.
const update = (t: TableTransport) =>
  t.execute(
    (r) => r.routeOf(0),
    (segmentId) => ({ get: { segmentId, keys: [] } }),
    {},
  );

describe('TableTransport', () => {
  it('refreshes the routing after SEGMENT_NOT_FOUND and sends the request to the new segment', async () => {
    // The segments of odd generations are gone (the table was deleted and created again since).
    const { seen, transport: t } = transport((segmentId) => (Number(segmentId) % 20 === 10 ? segmentNotFound(segmentId) : FOUND));
    for (const call of [read, update]) {
      seen.segments = [];
      const before = seen.routingCalls;
      await t.routing.refresh();
      expect((await call(t)).segmentId).toBe(`${before + 2}0`);
      expect(seen.segments).toEqual([`${before + 1}0`, `${before + 2}0`]);
    }
  });

  it('refreshes only once for SEGMENT_NOT_FOUND: a segment still missing after it fails the call with that code', async () => {
    const { seen, transport: t } = transport((segmentId) => segmentNotFound(segmentId));
    const err = await read(t).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect([(err as ServiceError).code, (err as ServiceError).message, (err as ServiceError).segment]).toEqual(['SEGMENT_NOT_FOUND', 'segment 20 does not exist', '20']);
    expect([seen.segments, seen.routingCalls]).toEqual([['10', '20'], 2]);
  });

  it('never sends again an update whose call broke after it may have reached the store, and says it may be applied', async () => {
    const dropped = statusError(grpc.status.UNAVAILABLE, 'Connection dropped');
    const { seen, transport: t } = transport((_, n) => (n <= 2 ? dropped : FOUND));
    const err = await update(t).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as UnavailableError).maybeApplied).toBe(true);
    expect(seen.segments).toHaveLength(1);
    // A read that failed so is simply read again.
    await read(t);
    expect(seen.segments).toHaveLength(3);
  });

  it('retries a call that surely never reached a store at most retry.maxRetries times, update or read', async () => {
    const refused = statusError(grpc.status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1');
    const { seen, transport: t } = transport(() => refused, 2, 10_000);
    for (const call of [update, read]) {
      seen.segments = [];
      const err = await call(t).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      expect((err as UnavailableError).maybeApplied).toBe(false);
      expect(seen.segments).toHaveLength(3);
    }
  });

  it('hands a request grouped for another partition count back to its caller to regroup, sending nothing', async () => {
    const { seen, transport: t } = transport(() => FOUND);
    const err = await t
      .execute(
        (r) => {
          throw new StaleGrouping(r.partitionCount);
        },
        (segmentId) => ({ get: { segmentId, keys: [] } }),
        { read: true },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StaleGrouping);
    expect((err as StaleGrouping).partitionCount).toBe(1);
    expect(seen.segments).toEqual([]);
  });
});
