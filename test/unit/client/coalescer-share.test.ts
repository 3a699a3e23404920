/** How many queued operations the coalescer's next Execute call takes (coalescer.ts callShare). */
import { describe, expect, it } from 'vitest';
import { callShare, defaultCoalescerOptions } from '../../../client/internal/coalescer';

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
