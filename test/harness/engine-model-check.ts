/**
 * Reads a segment engine back and compares it with the exact model (engine-model.ts), for the
 * in-process model tests.
 *
 * The order matters: point reads answer from the engine's memory and from LevelDB as it stands, while
 * iterators, scans and counts first make the engine apply its durable log to LevelDB. So point reads
 * come first — right after the updates, while LevelDB still lags them — and the rest after. Every
 * read path is compared exactly, versions included: single gets, multi-key gets (one family, and
 * several families in one call), paged iterators both ways, paged scans, and the segment's count and
 * bytes.
 */
import { expect } from 'vitest';
import type { SegmentEngine } from '../../segmentstore/storage/segment-engine';
import { entryString, FamilyModel, liveEntries } from './engine-model';

/** The model of one segment: its families and the sequence its next write gets. */
export interface SegmentModel {
  families: Map<string, FamilyModel>;
  nextSequence: number;
}

/** What a segment holds (its families as in the model) and which keys to read point-wise. */
export interface CheckScope {
  segmentId: string;
  model: SegmentModel;
  /** The segment's families, family-less ('') included where used. */
  families: readonly string[];
  /** The keys read point-wise in each family (the workload's key space). */
  keys: readonly string[];
  /** The model's clock (entries with an expiry at or before it are gone). */
  now: number;
}

const latin1 = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

function wantOf(scope: CheckScope, family: string, key: string): string {
  const e = scope.model.families.get(family)?.get(key);
  return e && (e.expiresAt === 0 || e.expiresAt > scope.now) ? entryString(e.value, e.sequence) : 'absent';
}

/** Point-reads `pairs` (family, key) of the segment in one Get and compares each with the model. */
async function getAndCompare(engine: SegmentEngine, scope: CheckScope, pairs: readonly [string, string][], label: string): Promise<void> {
  const res = await engine.get({ segmentId: scope.segmentId, keys: pairs.map(([family, key]) => ({ family, key: Buffer.from(key, 'latin1') })) });
  expect(res.entries.length, `${label}: answers of a get of ${pairs.length} keys`).toBe(pairs.length);
  res.entries.forEach((e, i) => {
    const [family, key] = pairs[i];
    const got = e.found ? entryString(latin1(e.value), e.sequence) : 'absent';
    expect(got, `${label} get seg ${scope.segmentId} fam '${family}' ${key}${pairs.length > 1 ? ` (one of ${pairs.length} keys)` : ''}`).toBe(wantOf(scope, family, key));
  });
}

/**
 * Point reads of the segment against the model: every key of `keys` in each family by multi-key gets
 * of up to 256 keys, `singles` random keys by a get each, and one get mixing keys of every family in
 * random order. Returns the number of keys compared.
 */
export async function checkPointReads(engine: SegmentEngine, scope: CheckScope, rand: () => number, label: string, singles = 16): Promise<number> {
  let checks = 0;
  for (const family of scope.families) {
    for (let from = 0; from < scope.keys.length; from += 256) {
      const pairs = scope.keys.slice(from, from + 256).map((k): [string, string] => [family, k]);
      await getAndCompare(engine, scope, pairs, label);
      checks += pairs.length;
    }
  }
  for (let i = 0; i < singles; i++) {
    const pair: [string, string] = [scope.families[Math.floor(rand() * scope.families.length)], scope.keys[Math.floor(rand() * scope.keys.length)]];
    await getAndCompare(engine, scope, [pair], label);
    checks++;
  }
  const mixed = Array.from({ length: 64 }, (): [string, string] => [scope.families[Math.floor(rand() * scope.families.length)], scope.keys[Math.floor(rand() * scope.keys.length)]]);
  const unique = [...new Map(mixed.map((p) => [`${p[0]}/${p[1]}`, p])).values()];
  await getAndCompare(engine, scope, unique, label);
  return checks + unique.length;
}

/** Point-reads the given keys of one family, single gets and one multi-key get, right after an update. */
export async function checkKeysRightAfter(engine: SegmentEngine, scope: CheckScope, family: string, keys: readonly string[], label: string): Promise<number> {
  for (const key of keys) await getAndCompare(engine, scope, [[family, key]], label);
  if (keys.length > 1)
    await getAndCompare(
      engine,
      scope,
      keys.map((k): [string, string] => [family, k]),
      label,
    );
  return keys.length * 2;
}

/** Options of one iteration of {@link checkIteration}: its bounds (latin1 keys), as in IterateRequest. */
export interface IterationBounds {
  from?: string;
  to?: string;
  toInclusive?: boolean;
}

/**
 * Iterates one family in both directions in pages of random sizes (within `bounds`, if given) and
 * compares the entries with the model's.
 */
export async function checkIteration(engine: SegmentEngine, scope: CheckScope, family: string, rand: () => number, label: string, bounds: IterationBounds = {}): Promise<number> {
  const inside = (k: string): boolean => (bounds.from === undefined || k >= bounds.from) && (bounds.to === undefined || k < bounds.to || (bounds.toInclusive === true && k === bounds.to));
  const want = liveEntries(scope.model.families.get(family) ?? new Map(), scope.now)
    .filter(([k]) => inside(k))
    .map(([k, e]) => `${k}=${entryString(e.value, e.sequence)}`);
  const range = {
    ...(bounds.from !== undefined ? { from: Buffer.from(bounds.from, 'latin1') } : {}),
    ...(bounds.to !== undefined ? { to: Buffer.from(bounds.to, 'latin1'), toInclusive: bounds.toInclusive === true } : {}),
  };
  for (const reverse of [false, true]) {
    const got: string[] = [];
    let after: Buffer | undefined;
    for (let page = 0; page < 10_000; page++) {
      const maxItems = 1 + Math.floor(rand() * 40);
      const res = await engine.iterate({ segmentId: scope.segmentId, family, includeValues: true, maxItems, reverse, hasAfter: after !== undefined, after, ...range });
      for (const item of res.items) got.push(`${latin1(item.key)}=${entryString(latin1(item.value), item.sequence)}`);
      if (res.done || res.items.length === 0) break;
      after = Buffer.from(res.items[res.items.length - 1].key);
    }
    const where = bounds.from !== undefined || bounds.to !== undefined ? ` [${bounds.from ?? ''}, ${bounds.to ?? ''}${bounds.toInclusive ? ']' : ')'}` : '';
    expect(got, `${label} seg ${scope.segmentId} fam '${family}'${where} reverse=${reverse}`).toEqual(reverse ? [...want].reverse() : want);
  }
  return 2;
}

/** The storage order of families in a segment: keyed ones by (name length, name), then the family-less keys. */
function storageOrder(families: readonly string[]): string[] {
  const storageName = (f: string) => Buffer.concat([Buffer.from([0, f.length]), Buffer.from(f)]);
  return [...families.filter((f) => f !== '').sort((a, b) => Buffer.compare(storageName(a), storageName(b))), ...(families.includes('') ? [''] : [])];
}

/** A paged Scan of the whole segment against the model. */
export async function checkScan(engine: SegmentEngine, scope: CheckScope, rand: () => number, label: string): Promise<number> {
  const want = storageOrder(scope.families).flatMap((f) => liveEntries(scope.model.families.get(f) ?? new Map(), scope.now).map(([k, e]) => `${f}/${k}@${e.sequence}:${e.value.length}`));
  const got: string[] = [];
  let position: Buffer = Buffer.alloc(0);
  for (let page = 0; page < 10_000; page++) {
    const res = await engine.scan({ segmentId: scope.segmentId, includeValues: true, maxItems: 1 + Math.floor(rand() * 50), after: position });
    for (const item of res.items) got.push(`${item.family}/${latin1(item.key)}@${item.sequence}:${item.value.length}`);
    position = Buffer.from(res.position);
    if (res.done) break;
  }
  expect(got, `${label} scan seg ${scope.segmentId}`).toEqual(want);
  return 1;
}

/** The segment's count and bytes (segmentInfo) against the model's live entries. */
export async function checkCount(engine: SegmentEngine, scope: CheckScope, label: string): Promise<number> {
  let count = 0;
  let bytes = 0;
  for (const f of scope.families) {
    for (const [k, e] of liveEntries(scope.model.families.get(f) ?? new Map(), scope.now)) {
      count++;
      bytes += k.length + e.value.length;
    }
  }
  const info = await engine.segmentInfo(scope.segmentId);
  expect({ entries: Number(info.entryCount), bytes: Number(info.bytes) }, `${label} count of seg ${scope.segmentId}`).toEqual({ entries: count, bytes });
  return 1;
}

/**
 * Reads the segment whole and compares it with the model: point reads first (see the module
 * comment), then iterators both ways per family, a scan and the count. Returns the number of checks.
 */
export async function checkAgainstModel(engine: SegmentEngine, scope: CheckScope, rand: () => number, label: string): Promise<number> {
  let checks = await checkPointReads(engine, scope, rand, label);
  for (const family of scope.families) checks += await checkIteration(engine, scope, family, rand, label);
  checks += await checkScan(engine, scope, rand, label);
  return checks + (await checkCount(engine, scope, label));
}
