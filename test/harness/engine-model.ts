/**
 * An exact model of a segment's key families, and a random workload for it, for model-based tests
 * of the segment engine (in process or behind a real segment store).
 *
 * A family is a map from key to its entry: value, version sequence and expiry (0 = never). It
 * follows the engine's semantics (segment-engine.ts): an update is atomic; all of its conditions are
 * checked against the state before it (INSERT: the key is not live; REPLACE and a conditional REMOVE:
 * the key is live with exactly that segment id and sequence), then its operations apply in order, or
 * none does. Each PUT, INSERT and REPLACE of a successful update takes the segment's next sequence in
 * operation order; removals and failed updates take none. An entry with a TTL expires at
 * `now + ttl` (the engine's clock when it applies) and from then on reads as absent, swept or not.
 * A range removal drops the keys with the prefix, at or after `from` and before `to` (an empty
 * bound is open). Keys and values are latin1 strings; REPLACE is a PUT with a VERSION condition.
 */
import type { ModificationInput } from '../../segmentstore/storage/validation';

/** What the model holds for one key. */
export interface ModelEntry {
  value: string;
  sequence: number;
  /** When the entry expires (ms, on the engine's clock); 0 = never. */
  expiresAt: number;
}

/** The model of one key family: key → entry (expired entries may linger, as in the engine). */
export type FamilyModel = Map<string, ModelEntry>;

/** A REMOVE_RANGE's bounds; an empty string means no bound of that kind. */
export interface RangeSpec {
  prefix: string;
  from: string;
  to: string;
}

/** One modification of a model update. */
export type ModelOp =
  | { kind: 'PUT'; key: string; value: string; ttl: number }
  | { kind: 'INSERT'; key: string; value: string; ttl: number }
  | { kind: 'REPLACE'; key: string; value: string; sequence: number; segmentId: string }
  | { kind: 'REMOVE'; key: string; sequence?: number; segmentId?: string }
  | { kind: 'RANGE'; range: RangeSpec };

/** Number of distinct keys the workload uses: `keyName(0)` … `keyName(KEY_SPACE - 1)`. */
export const KEY_SPACE = 300;

function inRange(key: string, range: RangeSpec): boolean {
  if (range.prefix && !key.startsWith(range.prefix)) return false;
  if (range.from && key < range.from) return false;
  if (range.to && key >= range.to) return false;
  return true;
}

/** The engine's modifications (wire shapes) for `ops` in `family`. */
export function toModifications(family: string, ops: ModelOp[]): ModificationInput[] {
  const bytes = (s: string) => Buffer.from(s, 'latin1');
  return ops.map((o): ModificationInput => {
    switch (o.kind) {
      case 'PUT':
      case 'INSERT':
        return { type: o.kind, family, key: bytes(o.key), value: bytes(o.value), ttlMs: o.ttl || undefined };
      case 'REPLACE':
        return { type: 'PUT', family, key: bytes(o.key), value: bytes(o.value), condition: { kind: 'VERSION', segmentId: o.segmentId, sequence: String(o.sequence) } };
      case 'REMOVE':
        return o.sequence === undefined
          ? { type: 'REMOVE', family, key: bytes(o.key) }
          : { type: 'REMOVE', family, key: bytes(o.key), condition: { kind: 'VERSION', segmentId: o.segmentId, sequence: String(o.sequence) } };
      case 'RANGE':
        return { type: 'REMOVE_RANGE', family, rangePrefix: bytes(o.range.prefix), rangeFrom: bytes(o.range.from), rangeTo: bytes(o.range.to) };
    }
  });
}

/**
 * Applies the update `ops` to `family` of segment `segmentId` at time `now`, atomically: returns the
 * new state (a copy; `family` is left alone), or null when a condition fails. Each PUT, INSERT and
 * REPLACE takes its sequence from `nextSequence()`, in order.
 */
export function applyOps(family: FamilyModel, ops: ModelOp[], now: number, segmentId: string, nextSequence: () => number): FamilyModel | null {
  const live = (key: string): ModelEntry | undefined => {
    const e = family.get(key);
    return e && (e.expiresAt === 0 || e.expiresAt > now) ? e : undefined;
  };
  for (const o of ops) {
    if (o.kind === 'INSERT' && live(o.key)) return null;
    if (o.kind === 'REPLACE' || (o.kind === 'REMOVE' && o.sequence !== undefined)) {
      const e = live(o.key);
      if (!e || e.sequence !== o.sequence || o.segmentId !== segmentId) return null;
    }
  }
  const out: FamilyModel = new Map(family);
  for (const o of ops) {
    if (o.kind === 'PUT' || o.kind === 'INSERT') out.set(o.key, { value: o.value, sequence: nextSequence(), expiresAt: o.ttl ? now + o.ttl : 0 });
    else if (o.kind === 'REPLACE') out.set(o.key, { value: o.value, sequence: nextSequence(), expiresAt: 0 });
    else if (o.kind === 'REMOVE') out.delete(o.key);
    else for (const k of [...out.keys()]) if (inRange(k, o.range)) out.delete(k);
  }
  return out;
}

/** The entries of `family` live at `now`, sorted by key (what an iterator returns). */
export function liveEntries(family: FamilyModel, now: number): [string, ModelEntry][] {
  return [...family.entries()].filter(([, e]) => e.expiresAt === 0 || e.expiresAt > now).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** `value head:length@sequence`: the form both sides of a comparison are put in. */
export function entryString(value: string, sequence: number | string): string {
  return `${value.slice(0, 12)}:${value.length}@${sequence}`;
}

/** The workload's key number `n`: `k0000`, `k0001`, … (sorts like its number). */
export function keyName(n: number): string {
  return `k${String(n).padStart(4, '0')}`;
}

/** A short summary of an update for failure messages: [kind, key or range] per operation. */
export function describeOps(ops: ModelOp[]): string {
  return JSON.stringify(ops.map((o) => [o.kind, o.kind === 'RANGE' ? o.range : o.key]));
}

/** A value starting with `tag|`: 35% of them 1.5-5 KB (so that chunks split), the rest under 40 bytes. */
function randomValue(rand: () => number, tag: string): string {
  const big = rand() < 0.35;
  const len = big ? 1500 + Math.floor(rand() * 3500) : Math.floor(rand() * 40);
  const head = `${tag}|`;
  return head + 'x'.repeat(Math.max(0, len - head.length));
}

/** Where and how {@link randomUpdate} writes. */
export interface UpdateSpec {
  /** A family-less update: one operation (the engine takes no batches there), never a range. */
  familyless: boolean;
  /** The segment the update goes to (what REPLACE and conditional REMOVE name). */
  segmentId: string;
  /** Starts every value written (tells the writes apart). */
  tag: string;
  /** The short TTL half of the TTL'd writes get (the others get one hour). */
  shortTtlMs: number;
  /** Keys used: `keyName(keyBase)` … `keyName(keyBase + keySpan - 1)`. @default 0, KEY_SPACE */
  keyBase?: number;
  keySpan?: number;
}

/**
 * A random update of a family whose current state is `family`: puts and inserts (15% with a TTL),
 * replaces and conditional removes of existing keys (15% of the replaces with a wrong sequence),
 * plain removes; or a range removal over several chunks plus a few puts. Batches are 1-8 operations
 * (30% up to 60), 20% of them appending a sorted run of keys, half of them sorted; one key at most
 * once per update. With a key window other than the whole key space, ranges stay within it.
 */
export function randomUpdate(rand: () => number, family: FamilyModel, spec: UpdateSpec): ModelOp[] {
  const { familyless, segmentId, tag, shortTtlMs, keyBase = 0, keySpan = KEY_SPACE } = spec;
  const pick = (): string => keyName(keyBase + Math.floor(rand() * keySpan));
  const existing = [...family.keys()].filter((k) => k >= keyName(keyBase) && k < keyName(keyBase + keySpan));
  const one = (): Exclude<ModelOp, { kind: 'RANGE' }> => {
    const x = rand();
    const ttl = rand() < 0.15 ? (rand() < 0.5 ? shortTtlMs : 3_600_000) : 0;
    if (x < 0.45) return { kind: 'PUT', key: pick(), value: randomValue(rand, tag), ttl };
    if (x < 0.55) return { kind: 'INSERT', key: pick(), value: randomValue(rand, tag), ttl };
    if (x < 0.7 && existing.length > 0) {
      const key = existing[Math.floor(rand() * existing.length)];
      const e = family.get(key)!;
      const sequence = rand() < 0.85 ? e.sequence : e.sequence + 1;
      return { kind: 'REPLACE', key, value: randomValue(rand, tag), sequence, segmentId };
    }
    if (x < 0.8 && existing.length > 0) {
      const key = existing[Math.floor(rand() * existing.length)];
      return rand() < 0.5 ? { kind: 'REMOVE', key } : { kind: 'REMOVE', key, sequence: family.get(key)!.sequence, segmentId };
    }
    if (x < 0.85) return { kind: 'REMOVE', key: pick() };
    return { kind: 'PUT', key: pick(), value: randomValue(rand, tag), ttl };
  };
  if (familyless) return [one()];
  const n = 1 + Math.floor(rand() * (rand() < 0.3 ? 60 : 8));
  const used = new Set<string>();
  if (rand() < 0.12) {
    // A range removal (over several chunks), then maybe a few puts.
    const a = keyBase + Math.floor(rand() * keySpan);
    const b = Math.min(keyBase + keySpan, a + 1 + Math.floor(rand() * keySpan * 0.6));
    const range: RangeSpec = rand() < 0.2 ? { prefix: keyName(a).slice(0, 4), from: '', to: '' } : { prefix: '', from: rand() < 0.1 ? '' : keyName(a), to: rand() < 0.1 ? '' : keyName(b) };
    if (keySpan !== KEY_SPACE || keyBase !== 0) {
      // Keep within this key window (other writers own the keys around it).
      if (!range.from) range.from = keyName(keyBase);
      if (!range.to) range.to = keyName(keyBase + keySpan);
      range.prefix = '';
    }
    const ops: ModelOp[] = [{ kind: 'RANGE', range }];
    for (let i = 0; i < Math.floor(rand() * 4); i++) {
      const o = one();
      if (o.kind !== 'PUT' && o.kind !== 'INSERT') continue;
      if (used.has(o.key)) continue;
      used.add(o.key);
      ops.push(o);
    }
    return ops;
  }
  // Puts of 20% of the batches write a run of consecutive keys; half the batches are sorted by key
  // (the family store's applySorted path), half in random order.
  const ops: Exclude<ModelOp, { kind: 'RANGE' }>[] = [];
  const appendRun = rand() < 0.2;
  let nextAppend = keyBase + Math.floor(rand() * keySpan);
  for (let i = 0; i < n; i++) {
    let o = one();
    if (appendRun && (o.kind === 'PUT' || o.kind === 'INSERT')) {
      if (nextAppend >= keyBase + keySpan) break;
      o = { ...o, key: keyName(nextAppend++) };
    }
    if (used.has(o.key)) continue;
    used.add(o.key);
    ops.push(o);
  }
  if (rand() < 0.5) ops.sort((x, y) => (x.key < y.key ? -1 : 1));
  return ops;
}

/** A count or seed from the environment (a KVT_MODEL_* knob), `fallback` when unset. */
export function modelKnob(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer; got "${raw}"`);
  return n;
}
