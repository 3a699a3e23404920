/** Assertions on rejected promises that the layer and table suites share. */
import { expect } from 'vitest';
import { InvalidArgumentError } from '../../client';

/**
 * What `p` rejects with; fails the test when it resolves. `Fields` names the fields of the error the
 * caller reads (a typed error's code, and the index, key, segment … some of them carry).
 */
export async function rejection<Fields extends object = { code?: string }>(p: Promise<unknown>): Promise<Error & Fields> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error & Fields,
  );
}

/** Asserts an InvalidArgumentError with exactly this message. */
export async function expectInvalid(p: Promise<unknown>, message: string): Promise<void> {
  const err = await rejection(p);
  expect([err.constructor.name, err.code, err.message]).toEqual(['InvalidArgumentError', 'INVALID_ARGUMENT', message]);
  expect(err).toBeInstanceOf(InvalidArgumentError);
}
