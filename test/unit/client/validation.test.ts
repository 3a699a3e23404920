import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, KeyValueTableFactory, KeyValueTableManager, Serializers, UnavailableError } from '../../../client';

// A controller address nothing listens on: every case below must fail before any call is made.
const controller = '127.0.0.1:1';

async function rejection(p: Promise<unknown>): Promise<InvalidArgumentError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidArgumentError);
  return err as InvalidArgumentError;
}

describe('KeyValueTable client-side validation', () => {
  const factory = KeyValueTableFactory.withScope('s', { controller });
  const table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
  afterAll(() => factory.close());

  it('names the family length and its maximum', async () => {
    expect((await rejection(table.put('f'.repeat(3000), 'k', 'v'))).message).toBe('key family is 3000 bytes; the maximum is 2048');
  });

  it('names the key length (with its family) and its maximum', async () => {
    expect((await rejection(table.put('ff', 'k'.repeat(8189), 'v'))).message).toBe('key with its family is 8191 bytes; the maximum is 8190');
    expect((await rejection(table.put(null, 'k'.repeat(9000), 'v'))).message).toBe('key is 9000 bytes; the maximum is 8190');
    expect((await rejection(table.put(null, '', 'v'))).message).toBe('key is empty; the minimum is 1 byte');
  });

  it('names the value length and its maximum', async () => {
    expect((await rejection(table.put(null, 'k', 'v'.repeat(1_040_385)))).message).toBe('value is 1040385 bytes; the maximum is 1040384');
  });

  it('names the batch size and its maximum', async () => {
    const entries = Array.from({ length: 257 }, (_, i) => [`k${i}`, 'v'] as const);
    expect((await rejection(table.putAll('f', entries))).message).toBe('batch has 257 items; the maximum is 256');
    const big = Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'.repeat(1_000_000)] as const);
    expect((await rejection(table.putAll('f', big))).message).toBe('batch is 17000041 bytes; the maximum is 16777216');
  });

  it('rejects duplicate keys in a batch, naming the key', async () => {
    const err = await rejection(
      table.putAll('f', [
        ['a', '1'],
        ['b', '2'],
        ['a', '3'],
      ]),
    );
    expect(err.message).toBe('key "a" appears more than once in the batch (index 2)');
    expect(err.index).toBe(2);
  });

  it('rejects multi-key updates and iterators without a family', async () => {
    expect((await rejection(table.putAll(null as unknown as string, [['a', '1']]))).message).toBe('putAll needs a key family: only keys of one family are updated atomically or iterated in order');
    expect(() => table.keyIterator(null as unknown as string)).toThrow(InvalidArgumentError);
    await rejection(table.put('', 'k', 'v'));
  });

  it('resolves an empty batch to [] without a round trip', async () => {
    // Nothing listens on the controller address, so any request would fail.
    expect(await table.putAll('f', [])).toEqual([]);
    expect(await table.update('f', [])).toEqual([]);
    expect(await table.getAll('f', [])).toEqual([]);
    await table.removeAll('f', []);
  });

  it('rejects bad page sizes, ttl and versions', async () => {
    expect(() => table.keyIterator('f', { maxKeysAtOnce: 0 })).toThrow('maxKeysAtOnce is 0; the minimum is 1');
    expect(() => table.keyIterator('f', { maxKeysAtOnce: 10_001 })).toThrow('maxKeysAtOnce is 10001; the maximum is 10000');
    expect((await rejection(table.put(null, 'k', 'v', { ttlMs: 0 }))).message).toBe('ttlMs is 0; the minimum is 1');
    expect((await rejection(table.replace(null, 'k', 'v', '1.2' as never))).message).toMatch(/^version must be a Version/);
    expect(() => table.keyIterator('f', { fromState: 'nonsense' })).toThrow('iterator state (fromState) is malformed or was altered');
  });

  it('rejects invalid table and scope names', () => {
    expect(() => factory.forKeyValueTable('123%$', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 })).toThrow(
      'table name "123%$" (5 characters) is invalid: it must be 1 to 250 characters of A-Z a-z 0-9 . -',
    );
    expect(() => KeyValueTableFactory.withScope('', { controller })).toThrow(InvalidArgumentError);
  });
});

describe('KeyValueTableManager client-side validation', () => {
  const manager = new KeyValueTableManager({ controller });
  afterAll(() => manager.close());

  it('names partitionCount and its limits', async () => {
    expect((await rejection(manager.createKeyValueTable('s', 't', { partitionCount: 0 }))).message).toBe('partitionCount is 0; the minimum is 1');
    expect((await rejection(manager.createKeyValueTable('s', 't', { partitionCount: 1025 }))).message).toBe('partitionCount is 1025; the maximum is 1024');
    expect((await rejection(manager.createKeyValueTable('s', 't', { partitionCount: 1.5 }))).message).toBe('partitionCount must be an integer, got 1.5');
  });

  it('names the invalid field', async () => {
    expect((await rejection(manager.createKeyValueTable('s', '123%$', { partitionCount: 1 }))).message).toMatch(/^table name "123%\$"/);
    expect((await rejection(manager.createScope('x'.repeat(251)))).message).toMatch(/^scope name ".*…" \(251 characters\) is invalid/);
  });
});

describe('an unreachable controller', () => {
  const options = { controller, timeoutMs: 3_000, retry: { maxRetries: 2, initialBackoffMs: 10, maxBackoffMs: 20 } };

  it('fails manager calls with UnavailableError instead of hanging', async () => {
    await using manager = new KeyValueTableManager(options);
    const err = await manager.createScope('s').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as UnavailableError).maybeApplied).toBe(false);
  });

  it('fails table calls with UnavailableError instead of hanging', async () => {
    await using factory = KeyValueTableFactory.withScope('s', options);
    const table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    expect(
      await table.get(null, 'k').then(
        () => null,
        (e: unknown) => e,
      ),
    ).toBeInstanceOf(UnavailableError);
  });
});
