/**
 * What the factory and the manager promise without a cluster: a closed factory hands out no tables,
 * and a manager call the controller never received is retried at most retry.maxRetries times (the
 * controller's address refuses connections; the client's debug log counts the retries).
 */
import { describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, ObjectClosedError, Serializers, UnavailableError } from '../../../client';
import { thrown } from '../../suites/table-conformance-context';

/** Nothing listens on port 1: connections are refused, so no request ever reaches a controller. */
const controller = '127.0.0.1:1';
const utf8 = { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 };

describe('KeyValueTableFactory', () => {
  it('hands out no table once closed, with ObjectClosedError', async () => {
    const factory = KeyValueTableFactory.withScope('s', { controller });
    const before = factory.forKeyValueTable('t', utf8);
    await factory.close();
    const err = thrown(() => factory.forKeyValueTable('t', utf8));
    expect([err.constructor, err.message]).toEqual([ObjectClosedError, 'the key-value table factory is closed']);
    // The table handed out before closed with the factory.
    await expect(before.get('f', 'k')).rejects.toBeInstanceOf(ObjectClosedError);
  });
});

describe('KeyValueTableManager', () => {
  it('retries a call that never reached the controller at most retry.maxRetries times, then fails with UnavailableError', async () => {
    const retries: unknown[] = [];
    const logger = { debug: (msg: string, fields?: Record<string, unknown>) => void (msg === 'kvt client retrying' && retries.push(fields)) };
    await using manager = new KeyValueTableManager({ controller, timeoutMs: 3_000, retry: { maxRetries: 2, initialBackoffMs: 1, maxBackoffMs: 1 }, logger });
    for (const call of [() => manager.createScope('s'), () => manager.getKeyValueTableConfiguration('s', 't')]) {
      retries.length = 0;
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      expect((err as UnavailableError).maybeApplied).toBe(false);
      expect(retries.map((f) => (f as { attempt: number }).attempt)).toEqual([1, 2]);
    }
  });
});
