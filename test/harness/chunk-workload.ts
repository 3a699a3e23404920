/**
 * Updates aimed at the chunks of a keyed family, for the engine's model tests.
 *
 * A family is stored in chunks (segmentstore/storage/chunk-codec.ts): chunk i holds the keys from its
 * lower key up to the next chunk's, at most MAX_CHUNK_ENTRIES entries and MAX_CHUNK_BYTES of them,
 * and splits past either. Reads that go wrong at chunk boundaries (a get that falls back to a chunk
 * LevelDB still holds after an update removed it; an iterator that sees the left half of a split
 * without the right) are only met by updates that remove whole chunks, start or end exactly at a
 * chunk's lower key, and split chunks. Random keys hit those shapes rarely, so these updates are aimed
 * at the chunk layout LevelDB holds, read from the engine's LevelDB (the layout the last apply left
 * there: exactly what a stale read falls back to; the staged layout may have moved on since, which
 * only makes a shape less exact).
 */
import type { ClassicLevel } from 'classic-level';
import { MAX_CHUNK_BYTES, MAX_CHUNK_ENTRIES } from '../../segmentstore/storage/chunks/chunk-codec';
import { encodeSegmentId, familyPrefix, prefixSuccessor, segmentDataPrefix } from '../../segmentstore/storage/key-codec';
import type { SegmentEngine } from '../../segmentstore/storage/segment-engine';
import { FamilyModel, keyName, ModelOp } from './engine-model';

/**
 * The lower keys (latin1) of the chunks of `family` in segment `segmentId` as the engine's LevelDB
 * holds them, ascending; the first chunk's is ''. (Reads the engine's private handle: a test's view
 * of the layout, never used to decide what is right.)
 */
export async function storedChunkLowers(engine: SegmentEngine, segmentId: string, family: string): Promise<string[]> {
  const db = (engine as unknown as { db?: ClassicLevel<Buffer, Buffer> }).db;
  if (!db || typeof db.keys !== 'function') throw new Error("the chunk-aimed workload reads the engine's LevelDB (SegmentEngine.db), which is gone");
  const prefix = familyPrefix(segmentDataPrefix(encodeSegmentId(segmentId)), family);
  const keys = await db.keys({ gte: prefix, lt: prefixSuccessor(prefix), keyEncoding: 'buffer' }).all();
  return keys.map((k) => k.toString('latin1', prefix.length));
}

/** The fewest entries of `valueBytes`-long values (and 5-byte keys) that fill a chunk: a run longer than it splits one. */
export function entriesPerChunk(valueBytes: number): number {
  return Math.min(MAX_CHUNK_ENTRIES, Math.floor(MAX_CHUNK_BYTES / (22 + 5 + valueBytes)));
}

/** A value starting with `tag|`, `min`…`max` bytes long. */
export function sizedValue(rand: () => number, tag: string, min: number, max: number): string {
  const head = `${tag}|`;
  return head + 'x'.repeat(Math.max(0, min + Math.floor(rand() * (max - min + 1)) - head.length));
}

/** An update aimed at the chunk layout, and the keys whose reads right after it are most telling. */
export interface AimedUpdate {
  /** Which of the shapes it is (see {@link aimedUpdate}). */
  kind: 'chunks by a range' | 'chunk by removes' | 'range at a boundary' | 'run that splits' | 'chunk removed and rewritten';
  /** What it is aimed at, for failure messages. */
  shape: string;
  ops: ModelOp[];
  /** First and last key number of the stretch it changed (reads right after look there and around). */
  from: number;
  to: number;
}

/** Where and how {@link aimedUpdate} writes. */
export interface AimSpec {
  /** The segment written (what conditional removes name). */
  segmentId: string;
  tag: string;
  /** Number of keys of the family's key space: `keyName(0)` … `keyName(keySpace - 1)`. */
  keySpace: number;
  /** Length of the values it writes. */
  minValue: number;
  maxValue: number;
}

/** The key number of `keyName(n)`, or `fallback` for the first chunk's lower key ''. */
function numberOf(key: string, fallback: number): number {
  return key === '' ? fallback : Number(key.slice(1));
}

/**
 * One update of `family` (current state) aimed at `lowers`, its chunks' lower keys: whole chunks
 * removed by a range from a chunk's lower key (to a later one's, or to the end), or by removing each
 * of their keys; a range from a lower key into the chunk, or across a boundary; a run of consecutive
 * keys written into one chunk, longer than a chunk holds (it splits); or a chunk's range removed with
 * a few of its keys written again in the same update.
 */
export function aimedUpdate(rand: () => number, family: FamilyModel, lowers: readonly string[], spec: AimSpec): AimedUpdate {
  const { segmentId, tag, keySpace, minValue, maxValue } = spec;
  const n = lowers.length;
  // A chunk with one before it (the shape of a stale floor read), unless there is only one.
  const i = n > 1 ? 1 + Math.floor(rand() * (n - 1)) : 0;
  const lowerNumber = (c: number): number => (c >= n ? keySpace : c < 0 ? 0 : numberOf(lowers[c], 0));
  const keysIn = (from: number, to: number): string[] => [...family.keys()].filter((k) => k >= keyName(from) && k < keyName(to)).sort();
  const value = (): string => sizedValue(rand, tag, minValue, maxValue);
  const x = rand();
  if (x < 0.25 || n === 0) {
    // Whole chunks i … j-1 by one range from chunk i's lower key; to the family's end now and then.
    const j = Math.min(n, i + 1 + Math.floor(rand() * 3));
    const toEnd = j >= n || rand() < 0.2;
    return {
      kind: 'chunks by a range',
      shape: `whole chunks ${i}…${toEnd ? 'end' : j - 1} of ${n} by a range`,
      ops: [{ kind: 'RANGE', range: { prefix: '', from: lowers[i] ?? '', to: toEnd ? '' : lowers[j] } }],
      from: lowerNumber(i),
      to: toEnd ? keySpace - 1 : lowerNumber(j) - 1,
    };
  }
  if (x < 0.45) {
    // Every key of chunk i removed one by one (some at their exact version).
    const keys = keysIn(lowerNumber(i), lowerNumber(i + 1)).slice(0, 256);
    const ops: ModelOp[] = keys.map((key) => (rand() < 0.3 ? { kind: 'REMOVE', key, sequence: family.get(key)!.sequence, segmentId } : { kind: 'REMOVE', key }));
    // Ascending keys take the engine's merge path, any other order its general one.
    if (rand() < 0.3) ops.reverse();
    return { kind: 'chunk by removes', shape: `whole chunk ${i} of ${n} by ${keys.length} removes`, ops, from: lowerNumber(i), to: lowerNumber(i + 1) - 1 };
  }
  if (x < 0.6) {
    // From a chunk's lower key into it, or from inside the chunk before it across the boundary.
    const a = lowerNumber(i);
    const b = lowerNumber(i + 1);
    const from = rand() < 0.5 ? a : Math.max(0, a - 1 - Math.floor(rand() * Math.max(1, a - lowerNumber(i - 1))));
    const to = Math.min(keySpace, b > a + 1 ? a + 1 + Math.floor(rand() * (b - a)) : b + 1);
    return {
      kind: 'range at a boundary',
      shape: `range ${keyName(from)}…${keyName(to)} at chunk ${i}'s boundary ${lowers[i] || '(first)'}`,
      ops: [{ kind: 'RANGE', range: { prefix: '', from: keyName(from), to: keyName(to) } }],
      from,
      to: to - 1,
    };
  }
  if (x < 0.85) {
    // A run of consecutive keys from inside chunk i, more bytes than a chunk holds: it splits.
    const length = Math.min(keySpace, entriesPerChunk(minValue) + 1 + Math.floor(rand() * entriesPerChunk(minValue)));
    // (Near the end of the key space the run starts early enough to be that long.)
    const start = Math.min(keySpace - length, lowerNumber(i) + Math.floor(rand() * Math.max(1, lowerNumber(i + 1) - lowerNumber(i))));
    const ops: ModelOp[] = [];
    for (let k = start; k < start + length && ops.length < 200; k++) {
      const key = keyName(k);
      ops.push(family.has(key) || rand() < 0.5 ? { kind: 'PUT', key, value: value(), ttl: 0 } : { kind: 'INSERT', key, value: value(), ttl: 0 });
    }
    return { kind: 'run that splits', shape: `run of ${ops.length} keys from ${keyName(start)} into chunk ${i} of ${n} (splits it)`, ops, from: start, to: start + ops.length - 1 };
  }
  // Chunk i's range removed and a few of its keys written again, in one update.
  const a = lowerNumber(i);
  const b = lowerNumber(i + 1);
  const ops: ModelOp[] = [{ kind: 'RANGE', range: { prefix: '', from: lowers[i] ?? '', to: i + 1 < n ? lowers[i + 1] : '' } }];
  const used = new Set<number>();
  for (let t = 0; t < 3; t++) {
    const k = a + Math.floor(rand() * Math.max(1, Math.min(b, keySpace) - a));
    if (used.has(k) || k >= keySpace) continue;
    used.add(k);
    ops.push({ kind: 'PUT', key: keyName(k), value: value(), ttl: 0 });
  }
  return { kind: 'chunk removed and rewritten', shape: `chunk ${i} of ${n} removed and ${ops.length - 1} of its keys written again`, ops, from: a, to: Math.min(b, keySpace) - 1 };
}

/**
 * Two updates of chunk i of `family` (chosen among the chunks in `lowers` that hold keys): `touch`
 * rewrites its record (one key put), `split` writes a run of consecutive keys into it, more than a
 * chunk holds, so that it splits into a shortened left chunk under its old key and new chunks after
 * it. Issued with a big write of something else between them, in one flush, they make an apply that
 * writes the chunk's old key early (where the touch first wrote it) and the new chunks late.
 */
export function touchThenSplit(rand: () => number, family: FamilyModel, lowers: readonly string[], spec: AimSpec): { chunk: number; touch: ModelOp[]; split: ModelOp[] } {
  const { tag, keySpace, minValue, maxValue } = spec;
  const n = lowers.length;
  const lowerNumber = (c: number): number => (c >= n ? keySpace : c < 0 ? 0 : numberOf(lowers[c], 0));
  const keys = [...family.keys()].sort();
  const held = Array.from({ length: n }, (_, c) => c).filter((c) => keys.some((k) => k >= keyName(lowerNumber(c)) && k < keyName(lowerNumber(c + 1))));
  const chunk = held.length > 0 ? held[Math.floor(rand() * held.length)] : 0;
  const a = lowerNumber(chunk);
  const b = Math.min(lowerNumber(chunk + 1), keySpace);
  const inside = keys.filter((k) => k >= keyName(a) && k < keyName(b));
  const touchKey = inside.length > 0 ? inside[Math.floor(rand() * inside.length)] : keyName(a);
  const touch: ModelOp[] = [{ kind: 'PUT', key: touchKey, value: sizedValue(rand, `${tag}t`, minValue, maxValue), ttl: 0 }];
  // From inside the chunk, so that its lower part stays where it is.
  const length = Math.min(keySpace, entriesPerChunk(minValue) + 2 + Math.floor(rand() * entriesPerChunk(minValue)));
  const start = Math.max(0, Math.min(keySpace - length, a + Math.floor(rand() * Math.max(1, (b - a) / 2))));
  const split: ModelOp[] = Array.from({ length }, (_, j): ModelOp => ({ kind: 'PUT', key: keyName(start + j), value: sizedValue(rand, `${tag}s`, minValue, maxValue), ttl: 0 }));
  return { chunk, touch, split };
}
