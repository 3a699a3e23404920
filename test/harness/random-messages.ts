/**
 * Random kvt.v1 segment-store messages (loader shapes) for the wire-codec equivalence tests of the
 * client and the segment store: deterministic from a seed, covering unset fields, empty and non-ASCII
 * strings, plain Uint8Arrays beside Buffers, and the int32 edge values of error indexes.
 */
/** A small deterministic generator, so failures reproduce. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function bytes(rand: () => number, max: number): Uint8Array {
  const n = Math.floor(rand() * max);
  const b = Array.from({ length: n }, () => Math.floor(rand() * 256));
  // Callers may pass plain Uint8Arrays as well as Buffers.
  return rand() < 0.5 ? Buffer.from(b) : Uint8Array.from(b);
}

export function text(rand: () => number): string {
  const choices = ['', 'a', 'fam', 'é-ü', '𝄞x', '123456789012345678', 'x'.repeat(300)];
  return choices[Math.floor(rand() * choices.length)];
}

export function randomModification(rand: () => number): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  if (rand() < 0.8) m.type = ['PUT', 'INSERT', 'REMOVE', 'REMOVE_RANGE'][Math.floor(rand() * 4)];
  if (rand() < 0.8) m.family = text(rand);
  if (rand() < 0.9) m.key = bytes(rand, 40);
  if (rand() < 0.7) m.value = bytes(rand, 300);
  const c = rand();
  if (c < 0.4) m.condition = { kind: ['NONE', 'NOT_EXISTS', 'VERSION'][Math.floor(rand() * 3)], segmentId: text(rand), sequence: text(rand) };
  else if (c < 0.5) m.condition = undefined;
  if (rand() < 0.3) m.ttlMs = String(Math.floor(rand() * 1e9));
  if (rand() < 0.2) m.rangeFrom = bytes(rand, 10);
  if (rand() < 0.2) m.rangeTo = bytes(rand, 10);
  if (rand() < 0.2) m.rangePrefix = bytes(rand, 10);
  return m;
}

export function randomSubRequest(rand: () => number): Record<string, unknown> {
  const r = rand();
  if (r < 0.5) return { update: { segmentId: text(rand), modifications: Array.from({ length: Math.floor(rand() * 5) }, () => randomModification(rand)) } };
  if (r < 0.9) return { get: { segmentId: text(rand), keys: Array.from({ length: Math.floor(rand() * 4) }, () => ({ family: text(rand), key: bytes(rand, 20) })) } };
  return {};
}

export function randomEntry(rand: () => number): Record<string, unknown> {
  return { found: rand() < 0.7, key: bytes(rand, 30), value: bytes(rand, 200), sequence: rand() < 0.8 ? String(Math.floor(rand() * 2 ** 53)) : '' };
}

export function randomSubResponse(rand: () => number): Record<string, unknown> {
  const r = rand();
  if (r < 0.2) return { update: { firstSequence: rand() < 0.9 ? String(Math.floor(rand() * 1e12)) : '' } };
  if (r < 0.4) return { update: { sequences: Array.from({ length: Math.floor(rand() * 4) }, () => (rand() < 0.8 ? String(Math.floor(rand() * 1e12)) : '')), firstSequence: rand() < 0.3 ? String(Math.floor(rand() * 1e12)) : '' } };
  if (r < 0.7) return { get: { entries: Array.from({ length: Math.floor(rand() * 4) }, () => randomEntry(rand)) } };
  if (r < 0.95) return { error: { code: text(rand), message: text(rand), index: [-1, 0, 3, 255, 2 ** 31 - 1, -(2 ** 31)][Math.floor(rand() * 6)], segmentId: text(rand) } };
  return {};
}

