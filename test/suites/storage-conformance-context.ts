/**
 * What the parts of the storage conformance suite share: the context they run against, and small
 * helpers.
 */
import { expect } from 'vitest';
import type { ModificationInput } from '../../segmentstore/storage/validation';
import { ConformanceTarget, SegmentStoreAdapter } from './segment-store-adapter';

/** Shared helpers of the suite's parts. */
export interface SuiteContext {
  store(): SegmentStoreAdapter;
  target(): ConformanceTarget;
  /** A fresh segment id, created on the store. */
  segment(): Promise<string>;
}

export const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Expects `p` to reject with `code` (and `index`, and a message matching `message`, when given). */
export async function expectFailure(p: Promise<unknown>, code: string, index?: number, message?: string | RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { code: string; index: number; message: string },
  );
  expect(err, `expected ${code}`).toBeDefined();
  expect(err!.code).toBe(code);
  if (index !== undefined) expect(err!.index).toBe(index);
  if (typeof message === 'string') expect(err!.message).toBe(message);
  else if (message) expect(err!.message).toMatch(message);
}

/** PUT one key; resolves its sequence. */
export async function put(store: SegmentStoreAdapter, segmentId: string, family: string, key: string | Buffer, value: string | Buffer, extra: Partial<ModificationInput> = {}): Promise<string> {
  const k = typeof key === 'string' ? b(key) : key;
  const v = typeof value === 'string' ? b(value) : value;
  const res = await store.update({ segmentId, modifications: [{ type: 'PUT', family, key: k, value: v, ...extra }] });
  return res.sequences[0];
}

/** The value of one key as a string, or null when absent. */
export async function read(store: SegmentStoreAdapter, segmentId: string, family: string, key: string): Promise<{ value: string; sequence: string } | null> {
  const res = await store.get({ segmentId, keys: [{ family, key: b(key) }] });
  const e = res.entries[0];
  return e.found ? { value: Buffer.from(e.value).toString('utf8'), sequence: e.sequence } : null;
}

/** A version condition of `segmentId` at `sequence`. */
export const version = (segmentId: string, sequence: string) => ({ kind: 'VERSION' as const, segmentId, sequence });
