/** The coalescer's pure parts (coalescer.ts): how many queued operations the next Execute call takes (callShare), how Gets are merged into one call (buildRequest), and how an answer goes back to its members (deliver). */
import { describe, expect, it } from 'vitest';
import { buildRequest, callShare, defaultCoalescerOptions, deliver, Pending, Slot } from '../../../client/internal/coalescer';
import type { ClientSubRequest } from '../../../client/internal/wire-codec';

const options = { ...defaultCoalescerOptions(), maxInFlight: 2, splitBytes: 32 * 1024 };

describe('callShare', () => {
  it('shares a large queue evenly among the free calls', () => {
    // 16 batches of ~10 KB with both calls free: two calls of 8, not one of 16.
    expect(callShare(16, 16 * 10_000, 2, options)).toBe(8);
    expect(callShare(15, 15 * 10_000, 2, options)).toBe(8);
    expect(callShare(9, 9 * 30_000, 3, { ...options, maxInFlight: 3 })).toBe(3);
  });

  it('keeps small operations together in one call, however many are queued', () => {
    // 200 single puts of ~100 B: splitting them would only add calls.
    expect(callShare(200, 200 * 100, 2, options)).toBe(options.maxSubRequests);
    expect(callShare(3, 60 * 1024, 2, options)).toBe(options.maxSubRequests);
  });

  it('does not split with one call free, or with fewer operations than free calls', () => {
    expect(callShare(16, 16 * 10_000, 1, options)).toBe(options.maxSubRequests);
    expect(callShare(1, 1_000_000, 2, options)).toBe(options.maxSubRequests);
  });

  it('never takes more than maxSubRequests, and splitBytes Infinity turns sharing off', () => {
    expect(callShare(2000, 2000 * 10_000, 2, options)).toBe(options.maxSubRequests);
    expect(callShare(16, 16 * 10_000, 2, { ...options, splitBytes: Infinity })).toBe(options.maxSubRequests);
  });
});

describe('deliver', () => {
  /** A member of a merged Get of `keys` keys, recording how it settled. */
  function member(keys: number, log: string[]): Pending {
    const keyRefs = Array.from({ length: keys }, () => ({ family: 'f', key: Buffer.from('k') }));
    return {
      sub: { get: { segmentId: '1', keys: keyRefs } },
      bytes: keys,
      deadline: Date.now() + 1000,
      expired: false,
      resolve: (r) => log.push(`resolved ${r.get?.entries.length}`),
      reject: (e) => log.push(`rejected ${String(e)}`),
    };
  }
  const entry = { found: false, key: Buffer.from('k'), value: Buffer.alloc(0), sequence: '' };

  it('splits a merged Get answer back among its members, each its own keys', () => {
    const log: string[] = [];
    const slots: Slot[] = [{ members: [member(2, log), member(1, log)], offsets: [0, 2] }];
    deliver(slots, { responses: [{ get: { entries: [entry, entry, entry] } }] });
    expect(log).toEqual(['resolved 2', 'resolved 1']);
  });

  it('fails the members of a merged Get answered with neither entries nor error rather than leave them waiting', () => {
    const log: string[] = [];
    const slots: Slot[] = [{ members: [member(1, log), member(1, log)], offsets: [0, 1] }];
    deliver(slots, { responses: [{}] });
    expect(log).toEqual(Array(2).fill('rejected ServiceError: the store answered sub-response 0 of a merged Get with neither entries nor error'));
  });
});

describe('buildRequest', () => {
  const get = (segmentId: string, ...keys: string[]): Pending => ({
    sub: { get: { segmentId, keys: keys.map((k) => ({ family: 'f', key: Buffer.from(k) })) } },
    bytes: keys.length,
    deadline: Date.now() + 1000,
    expired: false,
    resolve: () => undefined,
    reject: () => undefined,
  });
  const keysOf = (sub: ClientSubRequest): string[] => sub.get!.keys.map((k) => Buffer.from(k.key).toString());

  it("merges the Gets of one segment into one sub-request and leaves each caller's own request as it was", () => {
    const batch = [get('1', 'a', 'b'), get('2', 'x'), get('1', 'c'), get('1', 'd', 'e')];
    const { request, slots } = buildRequest(batch);
    expect(request.requests.map(keysOf)).toEqual([['a', 'b', 'c', 'd', 'e'], ['x']]);
    expect(slots.map((s) => s.offsets)).toEqual([[0, 2, 3], undefined]);
    // A caller's request is sent again as it is on a retry, and its answer is cut to its own keys.
    expect(batch.map((p) => keysOf(p.sub))).toEqual([['a', 'b'], ['x'], ['c'], ['d', 'e']]);
    const log: number[] = [];
    for (const p of batch) p.resolve = (r) => log.push(r.get!.entries.length);
    const entry = { found: false, key: Buffer.from('k'), value: Buffer.alloc(0), sequence: '' };
    deliver(slots, { responses: [{ get: { entries: Array(5).fill(entry) } }, { get: { entries: [entry] } }] });
    expect(log).toEqual([2, 1, 2, 1]);
  });
});
