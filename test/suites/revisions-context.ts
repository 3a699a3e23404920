/**
 * What the parts of the page revision suite share: the target they run against (fresh tables of
 * bytes keys and values, in memory or on a cluster), a clock the tests move, and small helpers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { KeyValueTable, PageRevisionStore, PageRevisionStoreOptions, Render, RenderBody, timeUuidOf } from '../../client';
import { seededRandom } from '../../bench/core/keys';
import { KIND } from '../../client/revisions/key-layout';

export { expectInvalid, rejection } from './rejections';

export type BytesTable = KeyValueTable<Uint8Array, Uint8Array>;

/** What the suite runs against. */
export interface RevisionsTarget {
  /** A fresh, empty table of bytes keys and values (Serializers.bytes for both). */
  table(): Promise<BytesTable>;
  /** True for a real cluster (the cases that load much data scale their figures by it). */
  readonly cluster: boolean;
  dispose(): Promise<void>;
}

/** A store on a fresh table, with the clock it reads. */
export interface StoreUnderTest {
  store: PageRevisionStore;
  table: BytesTable;
  clock: FakeClock;
}

/** What the suite's parts share. */
export interface RevisionsSuiteContext {
  target(): RevisionsTarget;
  /** A store on a fresh table with a fake clock (starting at T0) and these options. */
  store(options?: PageRevisionStoreOptions): Promise<StoreUnderTest>;
}

/** 2026-01-01T00:00:00Z: where fake clocks start. */
export const T0 = Date.UTC(2026, 0, 1);
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A clock that moves only when told. */
export class FakeClock {
  constructor(public now = T0) {}
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

/** Node bytes of the tids tests make. */
const NODE = Buffer.from('01a2b3c4d5e6', 'hex');

/** A v1 UUID at `ms` (+ `ticks` 100-ns intervals): tids that sort as the tests need. */
export const tidAt = (ms: number, ticks = 0): string => timeUuidOf(ms, 0, NODE, ticks);

/** Every key of a family, in order. */
export async function familyKeys(table: BytesTable, title: string): Promise<Buffer[]> {
  const keys: Buffer[] = [];
  for await (const page of table.keyIterator(title, { maxKeysAtOnce: 10_000 })) for (const k of page.items) keys.push(Buffer.from(k.key));
  return keys;
}

/** The keys of a family of one kind (the first byte; see client/revisions/key-layout.ts). */
export async function keysOfKind(table: BytesTable, title: string, kind: number): Promise<Buffer[]> {
  return (await familyKeys(table, title)).filter((k) => k[0] === kind);
}

/**
 * `table`, but every read of a render's chunks (a getAll of kind-CHUNK keys) first awaits `before`: so
 * that a write can land exactly between a reader's read of a record and its read of the chunks.
 */
export function beforeChunkReads(table: BytesTable, before: () => Promise<unknown>): BytesTable {
  return new Proxy(table, {
    get(target, property) {
      if (property === 'getAll') {
        return async (family: string | null, keys: Iterable<Uint8Array>) => {
          const wanted = [...keys];
          if (wanted[0]?.[0] === KIND.CHUNK) await before();
          return target.getAll(family, wanted);
        };
      }
      const v = Reflect.get(target, property, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Deterministic pseudo-random numbers (mulberry32), so that a failure can be replayed. */
export const random = seededRandom;

/** `n` bytes of text that compresses poorly (so sizes are real). */
export function text(n: number, seed = 1): string {
  const next = random(seed);
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 <>/="';
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)];
  return s;
}

/** `n` random bytes. */
export function bytes(n: number): Buffer {
  return randomBytes(n);
}

/** A render with its bodies replaced by a digest, so that large ones compare quickly (and print briefly). */
export function summary(r: Render | null | undefined): unknown {
  if (!r) return r;
  const digest = (b: RenderBody) => (typeof b === 'string' ? `text:${b.length}:${createHash('sha256').update(b).digest('hex')}` : `bytes:${b.length}:${createHash('sha256').update(b).digest('hex')}`);
  return { ...r, value: digest(r.value), parts: Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k, digest(v)])) };
}
