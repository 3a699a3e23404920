/**
 * Client options are checked when a manager or factory is made: a bad one is an InvalidArgumentError
 * that names the option and its limit, not a call that hangs (coalescing.maxInFlight 0 never sent
 * anything) or a TypeError from deep inside gRPC on the first call.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, KeyValueTableFactory, KeyValueTableManager } from '../../../client';

const BAD: [options: Record<string, unknown>, message: RegExp][] = [
  [{ controller: '' }, /^controller is ""; it must be a non-empty host:port without spaces$/],
  [{ controller: 9090 }, /^controller is 9090; it must be a non-empty host:port without spaces$/],
  [{ timeoutMs: 0 }, /^timeoutMs is 0; it must be a number of milliseconds from 1 to 2147483647$/],
  [{ timeoutMs: Number.NaN }, /^timeoutMs is NaN; it must be/],
  [{ timeoutMs: 2 ** 31 }, /^timeoutMs is 2147483648; it must be/],
  [{ retry: { maxRetries: -1 } }, /^retry\.maxRetries is -1; it must be an integer from 0 to 1000$/],
  [{ retry: { maxRetries: 1.5 } }, /^retry\.maxRetries is 1\.5; it must be an integer/],
  [{ retry: { initialBackoffMs: -5 } }, /^retry\.initialBackoffMs is -5; it must be a number of milliseconds from 0 to 2147483647$/],
  [{ retry: { initialBackoffMs: 500, maxBackoffMs: 100 } }, /^retry\.maxBackoffMs is 100; it must be at least retry\.initialBackoffMs \(500\) and at most 2147483647$/],
  [{ token: 42 }, /^token is a number; it must be a string$/],
  [{ token: 'two words' }, /^the token must be 1 to 4096 visible ASCII characters \(no spaces\); got 9 characters$/],
];

const BAD_COALESCING: [options: Record<string, unknown>, message: RegExp][] = [
  [{ maxInFlight: 0 }, /^coalescing\.maxInFlight is 0; it must be an integer from 1 to 1024$/],
  [{ maxInFlight: 'two' }, /^coalescing\.maxInFlight is "two"; it must be an integer from 1 to 1024$/],
  [{ maxSubRequests: 0 }, /^coalescing\.maxSubRequests is 0; it must be an integer from 1 to 100000$/],
  [{ maxBytes: -1 }, /^coalescing\.maxBytes is -1; it must be a number of bytes from 1 to 67108864$/],
  [{ splitBytes: -1 }, /^coalescing\.splitBytes is -1; it must be a number of bytes ≥ 0 \(Infinity: never split\)$/],
  [{ streams: 'yes' }, /^coalescing\.streams is "yes"; it must be true or false$/],
];

function thrown(make: () => unknown): unknown {
  try {
    const made = make() as { close?: () => unknown };
    void made?.close?.();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('client options', () => {
  it('are refused by the manager and the factory with InvalidArgumentError naming the option and the limit', () => {
    for (const [options, message] of BAD) {
      for (const make of [() => new KeyValueTableManager(options), () => KeyValueTableFactory.withScope('s', options)]) {
        const err = thrown(make);
        expect(err, JSON.stringify(options)).toBeInstanceOf(InvalidArgumentError);
        expect((err as Error).message).toMatch(message);
      }
    }
  });

  it('refuses bad coalescing options in the factory', () => {
    for (const [coalescing, message] of BAD_COALESCING) {
      const err = thrown(() => KeyValueTableFactory.withScope('s', { coalescing } as never));
      expect(err, JSON.stringify(coalescing)).toBeInstanceOf(InvalidArgumentError);
      expect((err as Error).message).toMatch(message);
    }
  });

  it('accepts the defaults, good values and splitBytes Infinity', async () => {
    const manager = new KeyValueTableManager({ controller: 'localhost:9090', timeoutMs: 1000, retry: { maxRetries: 0, initialBackoffMs: 0, maxBackoffMs: 0 }, token: 'abc.def' });
    await manager.close();
    const factory = KeyValueTableFactory.withScope('s', { coalescing: { maxInFlight: 1, maxSubRequests: 1, maxBytes: 1, splitBytes: Infinity, streams: false } });
    await factory.close();
    await KeyValueTableFactory.withScope('s').close();
  });
});
